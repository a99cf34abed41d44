// The core's Kubernetes rules, for volcanic.kube: quantity parsing, Go
// durations and a pod's resource request. Python calls these instead of
// keeping copies that could drift from what the engine does.
// Bad input raises ValueError with the core's message (the kube layer adds
// the object and field it read the value from).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "volcanic/api/duration.h"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/pod_requests.h"
#include "volcanic/api/quantity.h"
#include "volcanic/bindings/convert.h"

namespace volcanic::bindings {
namespace {

template <typename T>
T ValueOrRaise(absl::StatusOr<T> v) {
  if (!v.ok()) throw py::value_error(std::string(v.status().message()));
  return *std::move(v);
}

// A Python int from a 128-bit value (pybind11 has no 128-bit caster).
py::int_ BigInt(__int128 v) {
  if (v >= INT64_MIN && v <= INT64_MAX)  // every request, most quantities
    return py::reinterpret_steal<py::int_>(PyLong_FromLongLong(static_cast<long long>(v)));
  const bool negative = v < 0;
  unsigned __int128 m = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m != 0);
  if (negative) digits.insert(digits.begin(), '-');
  return py::reinterpret_steal<py::int_>(PyLong_FromString(digits.c_str(), nullptr, 10));
}

// A str, int or float as the JSON value the engine would read.
nlohmann::json QuantityJson(const py::handle& value) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value))
    return nlohmann::json::parse(std::string(py::str(value)));  // any size, as JSON would carry it
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  throw py::value_error(absl::StrCat("a quantity must be a string or a number, got ",
                                     std::string(py::str(value.get_type().attr("__name__")))));
}

// (nano-units, format): "1500m" -> (1500000000, "DecimalSI").
py::tuple ParseQuantityPy(const py::handle& value) {
  std::string text = ValueOrRaise(QuantityText(QuantityJson(value)));
  ExactQuantity q = ValueOrRaise(ParseExactQuantity(text));
  return py::make_tuple(BigInt(q.nanos), QuantityFormatName(q.format));
}

// name -> (milli-units, format), bytes resources included (bytes x 1000).
py::dict PodRequestsPy(const py::handle& spec, const std::string& where) {
  const nlohmann::json& j = ToJson(spec);
  Fields f;  // messages name the field as `where` gives it
  PodRequests r = ValueOrRaise(ComputePodRequests(j, f, where));
  py::dict out;
  const FormattedResource& req = r.requests;
  for (ResourceId id = 0; id < req.value.Size(); ++id) {
    int64_t v = req.value.Get(id);
    if (v == 0) continue;
    __int128 milli = ResourceNames::IsBytes(id) ? static_cast<__int128>(v) * 1000 : v;
    out[py::str(ResourceNames::Name(id))] = py::make_tuple(BigInt(milli), QuantityFormatName(req.FormatOf(id)));
  }
  return out;
}

}  // namespace

void BindKube(py::module_& m) {
  m.def("parse_quantity", &ParseQuantityPy, py::arg("value"),
        "A Kubernetes quantity as (nano-units rounded up, format name).");
  m.def("parse_go_duration", [](const std::string& text) { return ValueOrRaise(ParseGoDuration(text)); },
        py::arg("text"), "Go's time.ParseDuration: nanoseconds.");
  m.def("pod_requests", &PodRequestsPy, py::arg("spec"), py::arg("where") = "spec",
        "A pod spec's resource requests as the engine computes them: name -> (milli-units, format).");
}

}  // namespace volcanic::bindings
