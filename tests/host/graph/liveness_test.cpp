// Which layers are live and when each tensor is read for the last time (graph/liveness.h): what
// the cpu executor frees and the activation-memory bound counts.
#include "graph/liveness.h"

#include <gtest/gtest.h>

namespace tensoracle::graph {
namespace {

// x -> a = relu(x) -> b = a + x -> output b;  dead = relu(a), read by nobody.
struct Diamond {
  Network net;
  Tensor x, a, b, dead;
  Diamond() {
    x = net.add_input("x", DataType::kFloat32, {2});
    a = net.relu(x);
    b = net.add(a, x);
    dead = net.relu(a);
    net.mark_output(b, "b");
  }
};

TEST(Liveness, LayersThatReachNoOutputAreDead) {
  Diamond d;
  ASSERT_TRUE(d.net.status().is_ok()) << d.net.status().to_string();
  const std::vector<bool> live = live_nodes(d.net);
  ASSERT_EQ(live.size(), d.net.num_nodes());
  EXPECT_TRUE(live[static_cast<size_t>(d.net.tensor(d.a).producer)]);
  EXPECT_TRUE(live[static_cast<size_t>(d.net.tensor(d.b).producer)]);
  EXPECT_FALSE(live[static_cast<size_t>(d.net.tensor(d.dead).producer)]);
}

TEST(Liveness, ATensorIsFreedAfterItsLastLiveReaderAndOutputsAreKept) {
  Diamond d;
  const std::vector<size_t> last = last_readers(d.net, live_nodes(d.net));
  ASSERT_EQ(last.size(), d.net.num_tensors());
  const size_t add = static_cast<size_t>(d.net.tensor(d.b).producer);
  EXPECT_EQ(last[d.x.id], add);  // read by relu and then by the add
  EXPECT_EQ(last[d.a.id], add);  // the dead relu reads it later, but a dead reader does not count
  EXPECT_EQ(last[d.b.id], kKeptToTheEnd);     // an output: the caller reads it
  EXPECT_EQ(last[d.dead.id], kKeptToTheEnd);  // read by no live node
}

}  // namespace
}  // namespace tensoracle::graph
