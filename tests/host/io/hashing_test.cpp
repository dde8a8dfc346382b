#include "tensoracle/hashing.h"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

TEST(Sha256, MatchesTheFips180Vectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  Sha256 hasher;
  hasher.update("a");
  hasher.update("bc");
  EXPECT_EQ(hasher.finish_hex(), sha256_hex("abc"));
}

TEST(Xxh3, IsStableAndSensitive) {
  EXPECT_EQ(xxh3_128_hex("abc", 3).size(), 32u);
  EXPECT_EQ(xxh3_128_hex("abc", 3), xxh3_128_hex("abc", 3));
  EXPECT_NE(xxh3_128_hex("abc", 3), xxh3_128_hex("abd", 3));
}

}  // namespace
}  // namespace tensoracle
