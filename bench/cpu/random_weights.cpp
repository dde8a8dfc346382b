#include "random_weights.h"

#include <random>

namespace tensoracle::bench {

HostArray random_array(const Dims& shape, uint64_t seed) {
  HostArray a = HostArray::zeros(DataType::kFloat32, shape).value();
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < a.element_count(); ++i) a.data_as<float>()[i] = u(rng);
  return a;
}

Tensor random_constant(Network& net, const Dims& shape, float scale, uint64_t seed) {
  HostArray a = random_array(shape, seed);
  for (int64_t i = 0; i < a.element_count(); ++i) a.data_as<float>()[i] *= scale;
  return net.add_constant(std::move(a));
}

}  // namespace tensoracle::bench
