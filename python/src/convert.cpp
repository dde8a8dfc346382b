// PyTorch checkpoints without torch (include/tensoracle/pth.h): convert_pth and read_pth.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "tensoracle/pth.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

PthOptions pth_options(const std::string& key, nb::handle dtype, nb::handle max_output_bytes) {
  PthOptions options;
  options.key = key;
  if (!dtype.is_none()) options.float_dtype = data_type_from_python(dtype, "dtype");
  if (!max_output_bytes.is_none()) {
    const int64_t bytes = nb::cast<int64_t>(max_output_bytes);
    if (bytes < 0) fail("max_output_bytes: " + std::to_string(bytes) + " is negative");
    options.max_output_bytes = static_cast<uint64_t>(bytes);
  }
  return options;
}

}  // namespace

void bind_convert(nb::module_& m) {
  nb::class_<PthConversion>(m, "PthConversion", "What convert_pth wrote.")
      .def_ro("tensor_count", &PthConversion::tensor_count)
      .def_ro("source_sha256", &PthConversion::source_sha256)
      .def_ro("notes", &PthConversion::notes, "one line per skipped non-tensor value")
      .def("__repr__", [](const PthConversion& c) { return "<PthConversion " + std::to_string(c.tensor_count) + " tensors>"; });

  m.def("convert_pth", [](nb::handle input, nb::handle output, const std::string& key, nb::handle dtype,
                          nb::handle max_output_bytes) {
    const std::string in = path_from_python(input);
    const std::string out = path_from_python(output);
    const PthOptions options = pth_options(key, dtype, max_output_bytes);
    nb::gil_scoped_release release;
    return unwrap(convert_pth_to_safetensors(in, out, options));
  }, "input"_a, "output"_a, nb::kw_only(), "key"_a = "", "dtype"_a = nb::none(), "max_output_bytes"_a = nb::none(),
        nb::sig("def convert_pth(input: str | os.PathLike[str], output: str | os.PathLike[str], *, key: str = '', "
                "dtype: str | None = None, max_output_bytes: int | None = None) -> PthConversion"),
        "Converts a torch.save checkpoint to safetensors without Python's pickle or torch (`tensoracle convert`): "
        "only tensors and state-dict containers are read, anything else is refused. key: dotted path to the tensors "
        "(\"state_dict\"); dtype: \"fp32\", \"fp16\" or \"bf16\" converts the floating tensors; max_output_bytes: "
        "the most dense bytes the tensors may expand to (default: the larger of 16 GiB and 8x the file's size), "
        "checked before anything is written. Written atomically; only a new or regular file is replaced.");

  m.def("read_pth", [](nb::handle input, const std::string& key, nb::handle dtype, nb::handle max_output_bytes) {
    const std::string in = path_from_python(input);
    const PthOptions options = pth_options(key, dtype, max_output_bytes);
    Result<PthCheckpoint> read = Status::ok();
    {
      nb::gil_scoped_release release;
      read = PthCheckpoint::read(in, options);
    }
    const PthCheckpoint checkpoint = unwrap(std::move(read));
    nb::dict out;
    for (const std::string& name : checkpoint.names_in_file_order()) {
      const auto it = checkpoint.tensors().find(name);
      if (it == checkpoint.tensors().end()) continue;  // every name has a tensor (pth.h)
      auto* keep = new PthCheckpoint(checkpoint);
      nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<PthCheckpoint*>(p); });
      out[nb::str(name.c_str())] = numpy_view(it->second, owner);
    }
    return out;
  }, "input"_a, nb::kw_only(), "key"_a = "", "dtype"_a = nb::none(), "max_output_bytes"_a = nb::none(),
        nb::sig("def read_pth(input: str | os.PathLike[str], *, key: str = '', dtype: str | None = None, "
                "max_output_bytes: int | None = None) -> dict[str, numpy.typing.NDArray[typing.Any]]"),
        "The tensors of a torch.save checkpoint as read-only NumPy arrays, in the file's order, read as convert_pth "
        "reads them.");
}

}  // namespace tensoracle::python
