#include "graph/op_def.h"

#include <set>

namespace tensoracle::graph {

std::string InferContext::describe(size_t i) const {
  const std::string& name = i < input_names.size() ? input_names[i] : std::string("?");
  if (!has(i)) return fmt::format("input {} (omitted)", i);
  return fmt::format("input '{}' ({})", name, in(i).to_string());
}

Status InferContext::require(size_t i, const char* role) const {
  if (!has(i)) return error("the {} (input {}) is required", role, i);
  return Status::ok();
}

Status InferContext::require_type(size_t i, std::initializer_list<DataType> types, const char* role) const {
  TO_RETURN_IF_ERROR(require(i, role));
  for (DataType t : types)
    if (in(i).dtype == t) return Status::ok();
  std::string allowed;
  for (DataType t : types) allowed += (allowed.empty() ? "" : ", ") + std::string(data_type_name(t));
  return error("{} {} has type {}; expected one of {}", role, describe(i), data_type_name(in(i).dtype), allowed);
}

Status InferContext::require_float(size_t i, const char* role) const {
  return require_type(i, {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}, role);
}

Status InferContext::require_rank(size_t i, size_t min_rank, size_t max_rank, const char* role) const {
  TO_RETURN_IF_ERROR(require(i, role));
  const size_t rank = in(i).shape.rank();
  if (rank < min_rank || rank > max_rank) {
    if (min_rank == max_rank) return error("{} {} has rank {}; expected {}", role, describe(i), rank, min_rank);
    return error("{} {} has rank {}; expected {} to {}", role, describe(i), rank, min_rank, max_rank);
  }
  return Status::ok();
}

Status InferContext::require_same_type(size_t i, size_t j) const {
  if (in(i).dtype != in(j).dtype)
    return error("{} and {} have different types (layers do not convert types; add a cast)", describe(i),
                 describe(j));
  return Status::ok();
}

std::optional<Dims> broadcast_shapes(const Dims& a, const Dims& b) {
  const size_t rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.rank() ? 1 : a[i - (rank - a.rank())];
    const int64_t db = i < rank - b.rank() ? 1 : b[i - (rank - b.rank())];
    if (da == db) out[i] = da;
    else if (da == 1) out[i] = db;
    else if (db == 1) out[i] = da;
    else if (da < 0) out[i] = db;
    else if (db < 0) out[i] = da;
    else return std::nullopt;
  }
  return Dims(std::move(out));
}

std::optional<int64_t> normalize_axis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}

Result<std::vector<int64_t>> reduce_axes(const std::vector<int64_t>& given, size_t rank) {
  std::set<int64_t> axes;
  for (int64_t a : given) {
    auto axis = normalize_axis(a, rank);
    if (!axis) return invalid_argument("axis {} is out of range for rank {}", a, rank);
    if (!axes.insert(*axis).second) return invalid_argument("axes {} name dim {} twice", join_ints(given), *axis);
  }
  if (given.empty())
    for (size_t i = 0; i < rank; ++i) axes.insert(static_cast<int64_t>(i));
  return std::vector<int64_t>(axes.begin(), axes.end());
}

std::string join_ints(const std::vector<int64_t>& v) { return Dims(v).to_string(); }

}  // namespace tensoracle::graph
