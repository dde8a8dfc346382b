#include "errors.h"

#include <array>

namespace nb = nanobind;

namespace tensoracle::python {
namespace {

struct ErrorClass {
  StatusCode code;
  const char* name;
  PyObject* builtin_base;  // a standard exception the class also derives from (or null)
  const char* doc;
};

// One class per StatusCode other than kOk, in enum order.
const ErrorClass kErrorClasses[] = {
    {StatusCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
     "The caller passed something unusable (shape, name, option)."},
    {StatusCode::kNotFound, "NotFoundError", PyExc_LookupError, "A named file, tensor or key does not exist."},
    {StatusCode::kIoError, "IoError", PyExc_OSError, "The operating system refused a read, write, map or rename."},
    {StatusCode::kCorruptData, "CorruptDataError", nullptr,
     "A file's bytes contradict its own format (bad header, lying lengths)."},
    {StatusCode::kUnsupported, "UnsupportedError", PyExc_NotImplementedError,
     "A valid request this build, backend or GPU cannot serve."},
    {StatusCode::kFailedPrecondition, "FailedPreconditionError", nullptr,
     "The system is not in a state where the call can run."},
    {StatusCode::kCudaError, "CudaError", nullptr, "CUDA, cuBLASLt or cuDNN reported a failure."},
    {StatusCode::kInternal, "InternalError", nullptr, "A tensoracle invariant broke: a bug, reported with file:line."},
};

PyObject* error_base = nullptr;
std::array<PyObject*, std::size(kErrorClasses) + 1> error_by_code{};  // indexed by StatusCode

PyObject* new_class(nb::module_& m, const char* name, const char* doc, PyObject* bases) {
  // Defined in this module (so its stubs define them); tensoracle/__init__.py presents them as
  // tensoracle.<name>.
  const std::string qualified = std::string("tensoracle._tensoracle.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (cls == nullptr) throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}

void raise(const Status& status) {
  PyObject* cls = error_by_code[static_cast<size_t>(status.code())];
  if (cls == nullptr) cls = error_base;
  nb::object error = nb::handle(cls)(nb::str(status.message().c_str()));
  error.attr("code") = nb::str(std::string(status_code_name(status.code())).c_str());
  error.attr("message") = nb::str(status.message().c_str());
  PyErr_SetObject(cls, error.ptr());
}

}  // namespace

Status status_from_python_error(const nb::python_error& error, const std::string& context) {
  StatusCode code = StatusCode::kInvalidArgument;
  for (const ErrorClass& entry : kErrorClasses)
    if (error.matches(error_by_code[static_cast<size_t>(entry.code)])) code = entry.code;
  return Status(code, context + " raised " + error.what());
}

void bind_errors(nb::module_& m) {
  error_base = new_class(m, "Error",
                         "Base of every tensoracle error. str(e) and e.message are the library's message; e.code "
                         "is the status code's name (\"invalid_argument\", \"not_found\", ...).",
                         PyExc_Exception);
  for (const ErrorClass& entry : kErrorClasses) {
    nb::object bases = entry.builtin_base != nullptr ? nb::make_tuple(nb::handle(error_base), nb::handle(entry.builtin_base))
                                                     : nb::make_tuple(nb::handle(error_base));
    error_by_code[static_cast<size_t>(entry.code)] = new_class(m, entry.name, entry.doc, bases.ptr());
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      raise(e.status());
    }
  });
}

}  // namespace tensoracle::python
