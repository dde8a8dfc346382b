// Non-throwing lookup in a map: a pointer to the mapped value, or nullptr when the key is absent.
// Library code uses it instead of map::at (which throws), and says what an absent key means:
//
//   const ArrayView* view = lookup(inputs, name);
//   if (!view) return not_found("no input '{}'", name);  // the caller's mistake
//   TO_ASSERT(view != nullptr);                           // or: checked before, a broken invariant
#pragma once

namespace tensoracle {

template <typename Map, typename Key>
auto lookup(Map& map, const Key& key) -> decltype(&map.find(key)->second) {
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace tensoracle
