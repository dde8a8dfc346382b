// Calibration: the scales of a quantized (Q/DQ) network, measured by running representative
// inputs through its fp32 form (docs/quantization.md).
//
//   // A network with quantize/dequantize layers (its scales may be placeholders, see below):
//   TO_ASSIGN_OR_RETURN(std::vector<CalibrationTarget> targets, quantization_targets(network));
//   CalibrationSettings settings;
//   settings.method = CalibrationMethod::kEntropy;
//   TO_ASSIGN_OR_RETURN(Calibration result,
//                       calibrate(network, weights, targets, {"batch0.npz", "batch1.npz"}, settings));
//   TO_RETURN_IF_ERROR(write_calibration("scales.safetensors", result));
//
// What is measured. Every quantize layer Q(x, scale) names one target: the tensor x and the
// scale's name (the weight the scale constant was read from, else "<Q layer>.scale"). The run
// uses the network with every Q -> DQ pair taken out (DQ's consumers read x, cast to DQ's output
// type when it differs), so the scales in the network do not affect what is measured; the
// tensors x become extra outputs of that calibration network. A target may also be given by hand
// (any fp32 network, a list of tensor names).
//   - An activation (x computed by the network) gets one scale per tensor, from the statistics of
//     x over all inputs: min, max, and a histogram of |x| with `num_bins` equal bins over
//     [0, amax] (amax = the largest |x| seen; a second pass over the inputs fills it).
//   - A weight (x a constant) gets one scale per channel along the target's axis (the Q layer's
//     axis), or one for the tensor when the target has none; weights are always calibrated by
//     max (their values are known exactly; every method but max is for distributions).
// Methods (activations), each giving a threshold T; the scale is T / qmax, qmax = 127 for int8
// and 448 for fp8 e4m3 (the largest finite value), so that Q maps T to qmax:
//   kMax:        T = amax.
//   kPercentile: T = the right edge of the first histogram bin at which the cumulative share
//                of |x| reaches `percentile` percent (at most amax).
//   kEntropy:    TensorRT's method: for every i in [128, num_bins], the histogram cut at bin i
//                (the mass beyond folded into bin i-1) is the reference P, and P merged into 128
//                groups and spread back evenly over each group's non-empty bins is Q; both
//                smoothed (zeros become 1e-4, taken evenly from the non-zero bins); T = i * w
//                (w the bin width) for the i with the least KL(P || Q).
//   kMse:        T = i * w for the i in [1, num_bins] that least squares the error of
//                quantizing every bin's centre with scale T / qmax in the target's format
//                (int8: round half to even, clamp to [-128, 127]; fp8: e4m3, saturating),
//                weighted by the bin's count; the smallest such T on ties.
// A tensor whose |x| is 0 everywhere (or a channel) gets scale 1: any scale quantizes it exactly.
// Non-finite values in a measured tensor are an error naming the tensor and the input file.
//
// Inputs: each file (.npz, .npy for a one-input network, .safetensors) holds one batch, every
// network input by name; the shapes may differ between files (the calibration engine's profile
// spans them). The engine is built on `backend` (cpu by default) without the cache.
// Memory: every input file is held while calibrating, and one batch's measured activations at a
// time (for ResNet-50 about 40 MB per image): prefer several small batches to one large one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"
#include "tensoracle/status.h"

namespace tensoracle {

enum class CalibrationMethod { kMax, kPercentile, kEntropy, kMse };
// "max", "percentile", "entropy", "mse".
const char* calibration_method_name(CalibrationMethod method);
Result<CalibrationMethod> parse_calibration_method(const std::string& name);

struct CalibrationTarget {
  std::string tensor;                      // a tensor of the network (an activation or a constant)
  std::string scale_name;                  // the name its scale is written under
  DataType format = DataType::kInt8;       // int8 or fp8e4m3: decides qmax (127, 448)
  std::optional<int64_t> axis;             // per-channel along this axis (constants only); none: per-tensor
};

// The targets of a network's quantize layers, in layer order; a tensor quantized by several Q
// layers with the same scale name is one target. Errors: a Q layer whose output feeds anything
// but dequantize layers (the calibration network could not take it out), or no Q layer.
Result<std::vector<CalibrationTarget>> quantization_targets(const Network& network);

// Checks that every weight in `placeholders` (Weights::placeholder_names of the weights the
// network was defined with) is read only as the scale of quantize / dequantize layers: any other
// use is a weight the file lacks, named with the layer that reads it.
Status check_placeholders_are_scales(const Network& network, const std::vector<std::string>& placeholders);

// The network calibrate runs: Q -> DQ pairs taken out and every target marked as an extra output.
Result<Network> calibration_network(const Network& network, const std::vector<CalibrationTarget>& targets);

struct CalibrationSettings {
  CalibrationMethod method = CalibrationMethod::kMax;
  double percentile = 99.99;  // kPercentile, in (0, 100]
  int64_t num_bins = 2048;    // the histogram of |x| (kPercentile, kEntropy: at least 128, kMse)
  std::string backend = "cpu";
  // One line per step ("calibration pass 1/2: input 3 of 8 (batch3.npz)"); unset: silent.
  std::function<void(const std::string&)> progress;
};

struct CalibratedScale {
  CalibrationTarget target;
  HostArray scale;         // fp32: [] per tensor, [C] per channel
  double min = 0, max = 0; // of the tensor over every input (of the constant for a weight)
  double threshold = 0;    // T (per tensor; the largest channel's for a weight)
};

struct Calibration {
  std::vector<CalibratedScale> scales;
  // Written as the file's metadata: "method", "percentile" / "num_bins" where the method uses
  // them, "format", "graph_sha256" (structural hash of the calibration network),
  // "inputs" (a JSON list of {"file", "sha256"}), "tensoracle_version".
  std::map<std::string, std::string> metadata;
};

// Runs `inputs` through calibration_network(network, targets) and computes every target's scale.
// `weights` are the ones the network's constants came from (they enter the calibration engine's
// build). Errors name the input file, the tensor and the bad value.
Result<Calibration> calibrate(const Network& network, const Weights& weights,
                              const std::vector<CalibrationTarget>& targets, const std::vector<std::string>& inputs,
                              const CalibrationSettings& settings);

// The scales as a safetensors file (fp32 tensors named by scale_name) with the metadata.
Status write_calibration(const std::string& path, const Calibration& calibration);

}  // namespace tensoracle
