// PthCheckpoint and convert_pth_to_safetensors: archive -> pickle -> named tensors -> dense arrays.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <new>
#include <tuple>

#include "core/errors.h"
#include "core/lookup.h"
#include "io/mapped_file.h"
#include "io/pth/archive.h"
#include "io/pth/materialize.h"
#include "io/pth/pickle.h"
#include "io/pth/source_hash.h"
#include "io/pth/state_dict.h"
#include "tensoracle/byte_size.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/hashing.h"
#include "tensoracle/pth.h"
#include "tensoracle/safetensors.h"
#include "tensoracle/version.h"

namespace tensoracle {

namespace pth {
namespace {
struct CheckpointData {
  std::string path;
  std::map<std::string, pth::RecordBytes> records;  // storage key -> bytes (views point here)
  std::deque<HostArray> owned;                      // gathered / converted copies
  NamedArrayViews tensors;
  std::vector<std::string> order;
  std::vector<std::string> notes;
};
}  // namespace
}  // namespace pth

struct PthCheckpoint::Impl : pth::CheckpointData {};

namespace {

using pth::NamedTensorRef;

constexpr size_t kSha256HexDigits = 2 * std::tuple_size<Sha256Digest>::value;

// A descriptor closed when it goes out of scope.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Tensors stored in place in the input (contiguous, little-endian, not converted) are views into
// its mapping: their bytes are also at a known offset of the open input, from where the writer can
// copy them in the kernel without touching them (SafetensorsFileRange).
std::map<std::string, SafetensorsFileRange> in_place_ranges(const NamedArrayViews& tensors, const MappedFile& file,
                                                            int fd) {
  std::map<std::string, SafetensorsFileRange> ranges;
  const auto begin = reinterpret_cast<uintptr_t>(file.data());
  for (const auto& [name, view] : tensors) {
    const auto data = reinterpret_cast<uintptr_t>(view.data);
    if (data >= begin && data - begin < file.size()) ranges[name] = {fd, static_cast<uint64_t>(data - begin)};
  }
  return ranges;
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Reads each storage record the tensors use, once, after checking every tensor against its
// storage's declared size and every declared size against its record.
// (Archive errors name the file themselves.)
Status read_storages(const std::string& path, const pth::TorchArchive& archive,
                     const std::vector<NamedTensorRef>& tensors, std::map<std::string, pth::RecordBytes>& records) {
  std::map<std::string, uint64_t> record_sizes;
  for (const NamedTensorRef& named : tensors) {
    const pth::StorageRef& storage = *named.tensor->storage;
    const Status in_bounds = pth::check_tensor_bounds(named.name, *named.tensor);
    if (!in_bounds.is_ok()) return in_bounds.with_context(fmt::format("'{}'", path));
    auto size = record_sizes.find(storage.key);
    if (size == record_sizes.end()) {
      TO_ASSIGN_OR_RETURN(const uint64_t bytes, archive.storage_size(storage.key));
      size = record_sizes.emplace(storage.key, bytes).first;
    }
    TO_ASSIGN_OR_RETURN(const uint64_t declared, pth::storage_bytes(storage));
    if (declared > size->second)
      return corrupt_data("'{}': storage '{}' declares {} {} elements ({} bytes) but its record '{}/data/{}' holds {} bytes",
                          path, storage.key, storage.numel, data_type_name(storage.dtype), declared, archive.folder(),
                          storage.key, size->second);
  }
  for (const auto& [key, size] : record_sizes) {
    TO_ASSIGN_OR_RETURN(records[key], archive.read_storage(key));
  }
  return Status::ok();
}

// True when materialize() copies the tensor rather than using its bytes in place.
bool needs_copy(const pth::TensorRef& tensor, bool big_endian, const std::optional<DataType>& float_dtype) {
  return big_endian || !pth::is_contiguous(tensor) || pth::converted_dtype(tensor.dtype, float_dtype) != tensor.dtype;
}

// The dense bytes the tensors become: all of them, and those of the tensors copied in memory.
struct OutputSize {
  uint64_t total = 0;
  uint64_t copied = 0;
};

// Checked against the limit before anything is read, materialized or written: a few kilobytes of
// stride-0 views can ask for terabytes.
Result<OutputSize> check_output_size(const std::string& path, const std::vector<NamedTensorRef>& tensors,
                                     const PthOptions& options, uint64_t file_bytes, bool big_endian) {
  const uint64_t limit = options.max_output_bytes ? *options.max_output_bytes : default_pth_output_limit(file_bytes);
  OutputSize size;
  const NamedTensorRef* largest = nullptr;
  uint64_t largest_bytes = 0;
  for (const NamedTensorRef& named : tensors) {
    const DataType dtype = pth::converted_dtype(named.tensor->dtype, options.float_dtype);
    auto bytes = Dims(named.tensor->sizes).byte_size(dtype);
    if (!bytes.is_ok()) return bytes.status().with_context(fmt::format("'{}', tensor '{}'", path, named.name));
    const auto tensor_bytes = static_cast<uint64_t>(*bytes);
    if (largest == nullptr || tensor_bytes > largest_bytes) largest = &named, largest_bytes = tensor_bytes;
    size.total = tensor_bytes > UINT64_MAX - size.total ? UINT64_MAX : size.total + tensor_bytes;
    if (needs_copy(*named.tensor, big_endian, options.float_dtype)) size.copied += tensor_bytes;
  }
  if (size.total <= limit) return size;
  const std::string bound = options.max_output_bytes
                                ? std::string("the limit given")
                                : fmt::format("the default limit, the larger of {} and {}x the checkpoint's {}",
                                              format_byte_size(kDefaultPthOutputFloor), kDefaultPthOutputFactor,
                                              format_byte_size(file_bytes));
  const DataType largest_dtype = pth::converted_dtype(largest->tensor->dtype, options.float_dtype);
  return invalid_argument(
      "'{}': its {} tensors expand to {} ({} bytes) of dense data, over {} ({}); the largest is '{}' ({} {}, {}{}). "
      "Raise the limit if this is expected (PthOptions::max_output_bytes; tensoracle convert --max-output-size)",
      path, tensors.size(), format_byte_size(size.total), size.total, bound, format_byte_size(limit), largest->name,
      data_type_name(largest_dtype), Dims(largest->tensor->sizes).to_string(), format_byte_size(largest_bytes),
      pth::is_contiguous(*largest->tensor) ? "" : ", a view that is not contiguous");
}

// Reports materializing progress every few MiB of dense copies.
class MaterializeProgress {
 public:
  MaterializeProgress(const PthProgressFn& report, uint64_t total) : report_(report), total_(total) {}
  void add(uint64_t bytes) {
    done_ += bytes;
    if (report_ && (done_ - reported_ >= kEvery || done_ == total_)) {
      reported_ = done_;
      report_({"materializing", done_, total_});
    }
  }

 private:
  static constexpr uint64_t kEvery = uint64_t{64} << 20;
  const PthProgressFn& report_;
  uint64_t total_;
  uint64_t done_ = 0;
  uint64_t reported_ = 0;
};

Result<ArrayView> materialize(const NamedTensorRef& named, const pth::RecordBytes& record, bool big_endian,
                              const std::optional<DataType>& float_dtype, std::deque<HostArray>& owned) {
  const pth::TensorRef& tensor = *named.tensor;
  const Dims shape(tensor.sizes);
  const size_t element_size = data_type_size(tensor.dtype);
  ArrayView view{tensor.dtype, shape, record.data + static_cast<size_t>(tensor.offset) * element_size};
  if (big_endian || !pth::is_contiguous(tensor)) {
    TO_ASSIGN_OR_RETURN(HostArray dense, HostArray::zeros(tensor.dtype, shape));
    pth::gather(tensor, record.data, static_cast<uint8_t*>(dense.data()));
    if (big_endian) pth::swap_byte_order(static_cast<uint8_t*>(dense.data()), element_size, dense.element_count());
    view = owned.emplace_back(std::move(dense)).view();
  }
  const DataType target = pth::converted_dtype(tensor.dtype, float_dtype);
  if (target != tensor.dtype) {
    TO_ASSIGN_OR_RETURN(HostArray converted, HostArray::zeros(target, shape));
    convert_elements(tensor.dtype, view.data, target, converted.data(), static_cast<size_t>(converted.element_count()));
    view = owned.emplace_back(std::move(converted)).view();
  }
  return view;
}

// `file` is a mapping of `path` the caller holds already, or null.
Status read_checkpoint(const std::string& path, const std::shared_ptr<const MappedFile>& file,
                       const PthOptions& options, pth::CheckpointData& impl) {
  if (options.float_dtype && *options.float_dtype != DataType::kFloat32 &&
      *options.float_dtype != DataType::kFloat16 && *options.float_dtype != DataType::kBFloat16)
    return invalid_argument("float_dtype must be fp32, fp16 or bf16, not {}", data_type_name(*options.float_dtype));
  TO_ASSIGN_OR_RETURN(pth::TorchArchive archive, file ? pth::TorchArchive::open(file, options.limits)
                                                              : pth::TorchArchive::open(path, options.limits));
  auto unpickled = pth::unpickle(archive.pickle(), options.limits);
  if (!unpickled.is_ok())
    return unpickled.status().with_context(fmt::format("'{}', record '{}/data.pkl'", path, archive.folder()));
  auto collected = pth::collect_tensors(*unpickled->root, options.key, options.limits);
  if (!collected.is_ok()) return collected.status().with_context(fmt::format("'{}'", path));
  if (collected->tensors.empty()) {
    std::string skipped;
    for (const std::string& note : collected->notes) skipped += "\n  " + note;
    return not_found("'{}' holds no tensors{}{}", path,
                     options.key.empty() ? std::string() : fmt::format(" under key '{}'", options.key), skipped);
  }
  impl.path = path;
  impl.notes = std::move(collected->notes);
  TO_ASSIGN_OR_RETURN(const OutputSize output_size, check_output_size(path, collected->tensors, options,
                                                                       archive.file_size(), archive.big_endian()));
  TO_RETURN_IF_ERROR(read_storages(path, archive, collected->tensors, impl.records));
  MaterializeProgress progress(options.progress, output_size.copied);
  for (const NamedTensorRef& named : collected->tensors) {
    const auto* record = lookup(impl.records, named.tensor->storage->key);
    TO_ASSERT(record != nullptr);  // read_storages read every collected tensor's storage
    auto view = materialize(named, *record, archive.big_endian(), options.float_dtype, impl.owned);
    if (!view.is_ok()) return view.status().with_context(fmt::format("'{}', tensor '{}'", path, named.name));
    if (needs_copy(*named.tensor, archive.big_endian(), options.float_dtype)) progress.add(view->byte_size());
    impl.tensors.emplace(named.name, *view);
    impl.order.push_back(named.name);
  }
  return Status::ok();
}

// Allocation failures (a hostile file can ask for a lot) become a Status, never an exception
// through the API.
Status read_checkpoint_guarded(const std::string& path, const std::shared_ptr<const MappedFile>& file,
                               const PthOptions& options, pth::CheckpointData& impl) {
  try {
    return read_checkpoint(path, file, options, impl);
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kFailedPrecondition, "reading '{}': out of memory", path);
  }
}

}  // namespace

uint64_t default_pth_output_limit(uint64_t checkpoint_bytes) {
  const uint64_t scaled =
      checkpoint_bytes > UINT64_MAX / kDefaultPthOutputFactor ? UINT64_MAX : checkpoint_bytes * kDefaultPthOutputFactor;
  return std::max(kDefaultPthOutputFloor, scaled);
}

Result<PthCheckpoint> PthCheckpoint::read(const std::string& path, const PthOptions& options) {
  auto impl = std::make_shared<Impl>();
  TO_RETURN_IF_ERROR(read_checkpoint_guarded(path, nullptr, options, *impl));
  PthCheckpoint checkpoint;
  checkpoint.impl_ = std::move(impl);
  return checkpoint;
}

const std::string& PthCheckpoint::path() const { return impl_->path; }
const NamedArrayViews& PthCheckpoint::tensors() const { return impl_->tensors; }
const std::vector<std::string>& PthCheckpoint::names_in_file_order() const { return impl_->order; }
const std::vector<std::string>& PthCheckpoint::notes() const { return impl_->notes; }

Result<PthConversion> convert_pth_to_safetensors(const std::string& pth_path, const std::string& safetensors_path,
                                                 const PthOptions& options) {
  struct stat in_info, out_info;
  if (::stat(pth_path.c_str(), &in_info) == 0 && ::stat(safetensors_path.c_str(), &out_info) == 0 &&
      in_info.st_dev == out_info.st_dev && in_info.st_ino == out_info.st_ino)
    return invalid_argument("'{}' is the input itself; choose another output path", safetensors_path);

  // One mapping of the input serves both the source hash, which runs on a second thread, and the
  // tensors, which are written from it in place: the pages are faulted in once (by the hash,
  // which runs ahead), and what is hashed is what is converted. The header reserves the hash's
  // 64 hex digits and receives them just before the output is synced (SafetensorsDeferredValue),
  // so hashing overlaps parsing and writing.
  // A second descriptor lets the writer copy in-place tensors in the kernel; it is used only if it
  // names the very file that was mapped.
  const FileDescriptor input{::open(pth_path.c_str(), O_RDONLY | O_CLOEXEC)};
  auto mapping = MappedFile::open(pth_path);
  if (!mapping.is_ok()) return mapping.status();
  struct stat by_descriptor, by_path;
  const bool input_is_mapped = input.fd >= 0 && ::fstat(input.fd, &by_descriptor) == 0 &&
                               ::stat(pth_path.c_str(), &by_path) == 0 && by_descriptor.st_dev == by_path.st_dev &&
                               by_descriptor.st_ino == by_path.st_ino;
  pth::SourceHash hash(*mapping);
  pth::CheckpointData checkpoint;
  TO_RETURN_IF_ERROR(read_checkpoint_guarded(pth_path, *mapping, options, checkpoint));

  PthConversion conversion;
  conversion.tensor_count = checkpoint.tensors.size();
  conversion.notes = checkpoint.notes;
  SafetensorsWriteOptions write_options;
  write_options.metadata = {
      {"format", "pt"},
      {"source_file", file_name(pth_path)},
      {"tensor_count", std::to_string(conversion.tensor_count)},
      {"converter", "tensoracle " TENSORACLE_VERSION_STRING},
  };
  write_options.deferred_metadata["source_sha256"] = {kSha256HexDigits, [&]() -> Result<std::string> {
                                                        TO_ASSIGN_OR_RETURN(conversion.source_sha256, hash.hex());
                                                        return conversion.source_sha256;
                                                      }};
  if (input_is_mapped) write_options.file_ranges = in_place_ranges(checkpoint.tensors, **mapping, input.fd);
  if (options.progress)
    write_options.progress = [&](uint64_t written, uint64_t total) { options.progress({"writing", written, total}); };
  if (!options.key.empty()) write_options.metadata["source_key"] = options.key;
  if (options.float_dtype) write_options.metadata["float_dtype"] = std::string(data_type_name(*options.float_dtype));
  Status written;
  try {
    written = write_safetensors(safetensors_path, checkpoint.tensors, write_options);
  } catch (const std::bad_alloc&) {
    written = make_error(StatusCode::kFailedPrecondition, "writing '{}': out of memory", safetensors_path);
  }
  if (!written.is_ok()) return written;
  return conversion;
}

}  // namespace tensoracle
