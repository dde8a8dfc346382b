// Python callables the library calls back (graph functions, progress, metrics), held so that C++
// copies made without the GIL are safe.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <utility>

namespace tensoracle::python {

// A Python object shared by C++ copies of a callback, which the library may copy or destroy
// without holding the GIL: only the last copy's destructor touches the reference, under the GIL.
class SharedPythonObject {
 public:
  explicit SharedPythonObject(nanobind::object object) : object_(std::move(object)) {}
  SharedPythonObject(const SharedPythonObject&) = delete;
  SharedPythonObject& operator=(const SharedPythonObject&) = delete;
  ~SharedPythonObject() {
    if (!Py_IsInitialized()) {
      object_.release();  // the interpreter is gone: nothing left to release it to
      return;
    }
    nanobind::gil_scoped_acquire gil;
    object_.reset();
  }
  const nanobind::object& get() const { return object_; }

 private:
  nanobind::object object_;
};

inline std::shared_ptr<SharedPythonObject> share(nanobind::object object) {
  return std::make_shared<SharedPythonObject>(std::move(object));
}

}  // namespace tensoracle::python
