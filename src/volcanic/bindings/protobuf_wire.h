// Protobuf's wire format, as much as Kubernetes objects use: varints, fixed-width numbers
// and length-delimited fields (protobuf.cc reads and writes the objects with it).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"

namespace volcanic::bindings {

namespace py = pybind11;

inline constexpr absl::string_view kMagic("k8s\0", 4);  // an object's prefix (runtime.Unknown follows)
enum Wire { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// Reads one protobuf message; a truncated or malformed one raises ValueError.
class Reader {
 public:
  explicit Reader(absl::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool Done() const { return p_ >= end_; }

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) Fail();
      const uint8_t b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    Fail();
  }
  uint64_t Fixed(int bytes) {
    if (end_ - p_ < bytes) Fail();
    uint64_t v = 0;
    std::memcpy(&v, p_, bytes);  // little-endian, as the wire
    p_ += bytes;
    return v;
  }
  absl::string_view Length() {
    const uint64_t n = Varint();
    if (n > static_cast<uint64_t>(end_ - p_)) Fail();
    absl::string_view s(p_, n);
    p_ += n;
    return s;
  }
  void Skip(int wire) {
    switch (wire) {
      case kVarint: Varint(); return;
      case kFixed64: Fixed(8); return;
      case kLength: Length(); return;
      case kFixed32: Fixed(4); return;
      default: Fail();
    }
  }

 private:
  [[noreturn]] static void Fail() { throw py::value_error("protobuf: a truncated or malformed message"); }
  const char* p_;
  const char* end_;
};

inline void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline void PutTag(std::string& out, int number, Wire wire) { PutVarint(out, (static_cast<uint64_t>(number) << 3) | wire); }
inline void PutBytes(std::string& out, int number, absl::string_view bytes) {
  PutTag(out, number, kLength);
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

}  // namespace volcanic::bindings
