// The Network as Python holds it (network.cpp): a network made in Python (owned), or the
// builder's network lent to a Python graph function for the duration of the call (borrowed).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <utility>

#include "tensoracle/network.h"

namespace tensoracle::python {

class PyNetwork {
 public:
  PyNetwork() : owned_(std::make_shared<Network>()), network_(owned_.get()) {}
  explicit PyNetwork(Network& borrowed) : network_(&borrowed) {}
  // A network made elsewhere (an imported ONNX model's), owned from now on.
  static PyNetwork owning(Network network) {
    PyNetwork n;
    *n.owned_ = std::move(network);
    return n;
  }

  // The network; raises once a borrowed network's graph function has returned.
  Network& get() const;
  // Raises the network's definition error, if any (called after every change, so the error
  // surfaces at the Python line that caused it).
  void check_status() const;
  void end_borrow() { network_ = nullptr; }

 private:
  std::shared_ptr<Network> owned_;  // null when borrowed
  Network* network_;
};

// A tensor of one Python Network: the handle and the network object that gives it meaning.
struct PyTensor {
  nanobind::object network;  // a PyNetwork
  Tensor tensor;

  const TensorInfo& info() const;
};

// The handle of `value` in the network `self` (None: an omitted optional input); `what` names
// the argument in errors.
Tensor tensor_of(nanobind::handle self, nanobind::handle value, const std::string& what);
// A new Tensor of `self`, after raising the network's definition error if there is one.
PyTensor tensor_object(nanobind::handle self, Tensor tensor);

// The layer methods, one per op kind of the op table (layers.cpp).
void bind_layers(nanobind::class_<PyNetwork>& network);

// A Python Network over the builder's `network` (for a graph function call), and its end: the
// object raises on every use afterwards, so a network kept past the call cannot dangle.
nanobind::object borrow_network(Network& network);
void end_borrow(nanobind::handle borrowed);

}  // namespace tensoracle::python
