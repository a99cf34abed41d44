// Kubernetes' protobuf wire form <-> the dicts of its JSON form, for the objects
// volcanic's components create and watch most (pods, bindings, nodes): the API
// server spends markedly less CPU on protobuf than on JSON (docs/benchmark.md).
//
// Driven by the schema tools/protoschema reads from k8s.io/api's struct tags
// (python/volcanic/real/protobuf_schema.json): each field's protobuf number and
// kind, and its JSON name and omitempty/omitzero rule, so that a decoded object
// is the dict the same object's JSON would give, field for field (Go's
// encoding/json rules: a non-pointer struct is always written, a nil slice or
// map without omitempty is null, a zero scalar is left out only with omitempty).
//
// Nothing is guessed. Decoding raises ValueError on a field the schema lacks
// (a server newer than the schema), and encoding on a key the schema lacks or a
// value of the wrong type, naming the path: the caller then uses JSON, which
// carries anything.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "volcanic/bindings/convert.h"
#include "volcanic/bindings/protobuf_wire.h"

namespace volcanic::bindings {
namespace {

enum class Kind {
  kString, kBytes, kBool, kInt, kDouble, kMessage, kMap,
  // Types with a JSON form of their own, as their MarshalJSON writes it.
  kQuantity, kTime, kMicroTime, kIntOrString, kRawExtension, kFieldsV1,
};

Kind KindNamed(const std::string& name) {
  static const absl::flat_hash_map<std::string, Kind> kinds = {
      {"string", Kind::kString}, {"bytes", Kind::kBytes}, {"bool", Kind::kBool},
      {"int", Kind::kInt}, {"double", Kind::kDouble}, {"message", Kind::kMessage},
      {"map", Kind::kMap}, {"quantity", Kind::kQuantity}, {"time", Kind::kTime},
      {"microtime", Kind::kMicroTime}, {"intorstring", Kind::kIntOrString},
      {"rawextension", Kind::kRawExtension}, {"fieldsv1", Kind::kFieldsV1}};
  auto it = kinds.find(name);
  if (it == kinds.end()) throw py::value_error(absl::StrCat("protobuf schema: unknown kind ", name));
  return it->second;
}

bool IsScalar(Kind k) {
  return k == Kind::kString || k == Kind::kBytes || k == Kind::kBool || k == Kind::kInt || k == Kind::kDouble;
}

struct Field {
  int number = 0;
  std::string name;  // the JSON key
  py::str key;       // the same, made once
  Kind kind = Kind::kString;
  int message = -1;  // kMessage: index of its message
  Kind value_kind = Kind::kString;  // kMap: the values'
  int value_message = -1;
  bool repeated = false, omitempty = false, omitzero = false, pointer = false, inlined = false;
  bool list_items = false;  // a List's items: [] when empty, as the API server makes it
  bool skipped = false;     // never decoded (the caller's omit)
};

struct Message {
  std::string name;
  std::vector<Field> fields;
  absl::flat_hash_map<int, int> by_number;  // field number -> index in fields
  absl::flat_hash_set<std::string> keys;    // every JSON key, inline fields' included
};

absl::string_view View(const py::bytes& b) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(b.ptr(), &data, &size) != 0) throw py::error_already_set();
  return {data, static_cast<size_t>(size)};
}

py::str Str(absl::string_view s) { return py::str(s.data(), s.size()); }

// Where a value being encoded is: rendered only for an error, so that encoding builds no
// strings on its way.
struct Path {
  const Path* parent;
  absl::string_view name;
  std::string Render() const { return parent == nullptr ? std::string(name) : absl::StrCat(parent->Render(), ".", name); }
};

// metav1.Time and MicroTime as their MarshalJSON writes them: RFC 3339 in UTC, to
// the second or the microsecond; the zero time is null.
py::object TimeJson(int64_t seconds, int64_t nanos, bool micro) {
  if (seconds == 0 && nanos == 0) return py::none();
  const absl::Time t = absl::FromUnixSeconds(seconds) + absl::Nanoseconds(micro ? nanos / 1000 * 1000 : 0);
  return py::str(absl::FormatTime(micro ? "%Y-%m-%d%ET%H:%M:%E6SZ" : "%Y-%m-%d%ET%H:%M:%SZ", t,
                                  absl::UTCTimeZone()));
}

class Codec {
 public:
  Codec(const std::string& schema_text, py::object json_loads, py::object json_dumps, bool strict,
        const std::vector<std::string>& omit)
      : loads_(std::move(json_loads)), dumps_(std::move(json_dumps)), strict_(strict) {
    const absl::flat_hash_set<std::string> skipped(omit.begin(), omit.end());
    const nlohmann::json schema = nlohmann::json::parse(schema_text);
    absl::flat_hash_map<std::string, int> index;
    for (const auto& [name, _] : schema.at("messages").items()) {
      index[name] = static_cast<int>(messages_.size());
      messages_.push_back(Message{name, {}, {}, {}});
    }
    auto message_index = [&](const nlohmann::json& f) {
      auto it = index.find(f.at("t").get<std::string>());
      if (it == index.end()) throw py::value_error("protobuf schema: a field names an unknown message");
      return it->second;
    };
    for (const auto& [name, fields] : schema.at("messages").items()) {
      Message& m = messages_[index[name]];
      for (const auto& f : fields) {
        Field field;
        field.number = f.at("n").get<int>();
        field.name = f.at("json").get<std::string>();
        field.key = py::str(field.name);
        field.kind = KindNamed(f.at("k").get<std::string>());
        if (field.kind == Kind::kMessage) field.message = message_index(f);
        if (field.kind == Kind::kMap) {
          field.value_kind = KindNamed(f.at("v").at("k").get<std::string>());
          if (field.value_kind == Kind::kMessage) field.value_message = message_index(f.at("v"));
        }
        field.repeated = f.value("rep", false) && field.kind != Kind::kMap;
        field.omitempty = f.value("omitempty", false);
        field.omitzero = f.value("omitzero", false);
        field.pointer = f.value("ptr", false);
        field.inlined = f.value("inline", false);
        field.list_items = field.name == "items" && absl::EndsWith(name, "List");
        field.skipped = skipped.contains(field.name);
        m.by_number[field.number] = static_cast<int>(m.fields.size());
        m.fields.push_back(std::move(field));
      }
    }
    for (Message& m : messages_) CollectKeys(m, m.keys, 0);
    for (const auto& [kind, name] : schema.at("roots").items()) roots_[kind] = index.at(name.get<std::string>());
  }

  // "k8s\0" + runtime.Unknown{typeMeta, raw}: an object as the API server reads it.
  py::bytes Encode(const py::handle& obj) const {
    if (!py::isinstance<py::dict>(obj)) throw py::value_error("protobuf: an object must be a dict");
    const py::dict d = py::reinterpret_borrow<py::dict>(obj);
    const std::string kind = RequiredString(d, "kind");
    const std::string api_version = RequiredString(d, "apiVersion");
    auto root = roots_.find(kind);
    if (root == roots_.end()) throw py::value_error(absl::StrCat("protobuf: no schema for kind ", kind));
    if (api_version != "v1") throw py::value_error(absl::StrCat("protobuf: ", kind, " is not of apiVersion ", api_version));
    std::string raw;
    const Path path{nullptr, kind};
    const int type_keys = 2;  // apiVersion and kind, checked above
    if (EncodeMessage(root->second, d, raw, path, 0) + type_keys != py::len(d)) RefuseUnknownKey(root->second, d, path, true);
    std::string type_meta;
    PutBytes(type_meta, 1, api_version);
    PutBytes(type_meta, 2, kind);
    std::string out(kMagic.data(), kMagic.size());
    PutBytes(out, 1, type_meta);
    PutBytes(out, 2, raw);
    return py::bytes(out);
  }

  py::object Decode(const py::bytes& data) const { return DecodeEnvelope(View(data), 0); }

  // One frame of a protobuf watch: metav1.WatchEvent{type, object}, with or without
  // its own envelope.
  py::object DecodeWatchEvent(const py::bytes& frame) const {
    absl::string_view data = View(frame);
    if (data.substr(0, kMagic.size()) == kMagic) return DecodeEnvelope(data, 0);
    return DecodeMessage(roots_.at("WatchEvent"), data, 0);
  }

 private:
  void CollectKeys(const Message& m, absl::flat_hash_set<std::string>& keys, int depth) const {
    for (const Field& f : m.fields) {
      if (f.inlined && depth < kMaxDepth) CollectKeys(messages_[f.message], keys, depth + 1);
      else keys.insert(f.name);
    }
  }

  static std::string RequiredString(const py::dict& d, const char* key) {
    PyObject* v = PyDict_GetItemString(d.ptr(), key);
    if (v == nullptr || !PyUnicode_Check(v)) throw py::value_error(absl::StrCat("protobuf: no ", key, " string"));
    return py::reinterpret_borrow<py::str>(v).cast<std::string>();
  }

  [[noreturn]] static void Refuse(const Path& path, absl::string_view why) {
    throw py::value_error(absl::StrCat("protobuf: ", path.Render(), ": ", why));
  }

  // --- decoding ---------------------------------------------------------------

  py::object DecodeEnvelope(absl::string_view data, int depth) const {
    if (data.substr(0, kMagic.size()) != kMagic) throw py::value_error("protobuf: not a Kubernetes protobuf object");
    Reader r(data.substr(kMagic.size()));
    absl::string_view type_meta, raw;
    while (!r.Done()) {
      const uint64_t tag = r.Varint();
      if (tag == ((1 << 3) | kLength)) type_meta = r.Length();
      else if (tag == ((2 << 3) | kLength)) raw = r.Length();
      else r.Skip(static_cast<int>(tag & 7));
    }
    absl::string_view api_version, kind;
    Reader t(type_meta);
    while (!t.Done()) {
      const uint64_t tag = t.Varint();
      if (tag == ((1 << 3) | kLength)) api_version = t.Length();
      else if (tag == ((2 << 3) | kLength)) kind = t.Length();
      else t.Skip(static_cast<int>(tag & 7));
    }
    auto root = roots_.find(std::string(kind));
    if (root == roots_.end()) throw py::value_error(absl::StrCat("protobuf: no schema for kind ", kind));
    py::dict out;
    out["kind"] = Str(kind);
    out["apiVersion"] = Str(api_version);
    return DecodeMessage(root->second, raw, depth + 1, out);
  }

  // The message's fields into `out` (a new dict if not given), as its JSON's keys.
  py::dict DecodeMessage(int index, absl::string_view data, int depth, py::dict out = py::dict()) const {
    if (depth > kMaxDepth) throw py::value_error("protobuf: nested too deep");
    const Message& m = messages_[index];
    std::vector<py::object> seen(m.fields.size());  // a null handle: not on the wire
    Reader r(data);
    while (!r.Done()) {
      const uint64_t tag = r.Varint();
      const int number = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
      auto it = m.by_number.find(number);
      if (it == m.by_number.end()) {
        if (!strict_) {
          r.Skip(wire);
          continue;
        }
        throw py::value_error(absl::StrCat("protobuf: ", m.name, " has a field ", number,
                                           " the schema lacks (a newer API server)"));
      }
      const Field& f = m.fields[it->second];
      if (f.skipped) {
        r.Skip(wire);
        continue;
      }
      py::object& slot = seen[it->second];
      if (f.kind == Kind::kMap) {
        if (!slot) slot = py::dict();
        DecodeMapEntry(f, r.Length(), py::reinterpret_borrow<py::dict>(slot), depth);
      } else if (f.repeated) {
        if (!slot) slot = py::list();
        py::list list = py::reinterpret_borrow<py::list>(slot);
        if (wire == kLength && (f.kind == Kind::kInt || f.kind == Kind::kBool || f.kind == Kind::kDouble)) {
          Reader packed(r.Length());
          while (!packed.Done()) list.append(DecodeValue(f.kind, f.message, f.kind == Kind::kDouble ? kFixed64 : kVarint, packed, depth));
        } else {
          list.append(DecodeValue(f.kind, f.message, wire, r, depth));
        }
      } else {
        slot = DecodeValue(f.kind, f.message, wire, r, depth);
      }
    }
    for (size_t i = 0; i < m.fields.size(); ++i) {
      if (!m.fields[i].skipped) Emit(m.fields[i], seen[i], out, depth);
    }
    return out;
  }

  void DecodeMapEntry(const Field& f, absl::string_view entry, const py::dict& into, int depth) const {
    Reader r(entry);
    py::object key = py::str(""), value;
    while (!r.Done()) {
      const uint64_t tag = r.Varint();
      const int number = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
      if (number == 1) key = DecodeValue(Kind::kString, -1, wire, r, depth);
      else if (number == 2) value = DecodeValue(f.value_kind, f.value_message, wire, r, depth);
      else r.Skip(wire);
    }
    into[key] = value ? value : ZeroValue(f.value_kind, f.value_message, depth);
  }

  py::object DecodeValue(Kind kind, int message, int wire, Reader& r, int depth) const {
    switch (kind) {
      case Kind::kString: return Str(r.Length());
      case Kind::kBytes: return py::str(absl::Base64Escape(r.Length()));
      case Kind::kBool: return py::bool_(r.Varint() != 0);
      case Kind::kInt: return py::int_(static_cast<int64_t>(r.Varint()));
      case Kind::kDouble: {
        const uint64_t bits = r.Fixed(8);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return py::float_(d);
      }
      case Kind::kMessage: return DecodeMessage(message, r.Length(), depth + 1);
      default: return DecodeSpecial(kind, r.Length(), depth);
    }
  }

  // The types whose JSON is not their fields': each a small message of its own.
  py::object DecodeSpecial(Kind kind, absl::string_view data, int depth) const {
    uint64_t numbers[4] = {0, 0, 0, 0};
    absl::string_view strings[4];
    Reader r(data);
    while (!r.Done()) {
      const uint64_t tag = r.Varint();
      const int number = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
      if (number < 1 || number > 3) r.Skip(wire);
      else if (wire == kVarint) numbers[number] = r.Varint();
      else if (wire == kLength) strings[number] = r.Length();
      else r.Skip(wire);
    }
    switch (kind) {
      case Kind::kQuantity: return strings[1].empty() ? py::str("0") : Str(strings[1]);
      case Kind::kTime:
      case Kind::kMicroTime:
        return TimeJson(static_cast<int64_t>(numbers[1]), static_cast<int32_t>(numbers[2]), kind == Kind::kMicroTime);
      case Kind::kIntOrString:
        if (numbers[1] == 1) return Str(strings[3]);
        return py::int_(static_cast<int32_t>(numbers[2]));
      default:  // RawExtension, FieldsV1: raw bytes, JSON or an object of its own
        if (strings[1].empty()) return py::none();
        if (strings[1].substr(0, kMagic.size()) == kMagic) return DecodeEnvelope(strings[1], depth + 1);
        return loads_(py::bytes(strings[1].data(), strings[1].size()));
    }
  }

  py::object ZeroValue(Kind kind, int message, int depth) const {
    switch (kind) {
      case Kind::kString: return py::str("");
      case Kind::kBytes: return py::none();
      case Kind::kBool: return py::bool_(false);
      case Kind::kInt: return py::int_(0);
      case Kind::kDouble: return py::float_(0.0);
      case Kind::kMessage: return DecodeMessage(message, {}, depth + 1);
      default: return DecodeSpecial(kind, {}, depth);
    }
  }

  static bool IsZero(const py::object& v) {
    if (v.is_none()) return true;
    if (PyBool_Check(v.ptr())) return v.ptr() == Py_False;
    if (PyLong_Check(v.ptr())) return PyLong_AsLongLong(v.ptr()) == 0;
    if (PyFloat_Check(v.ptr())) return PyFloat_AsDouble(v.ptr()) == 0.0;
    if (PyUnicode_Check(v.ptr())) return PyUnicode_GetLength(v.ptr()) == 0;
    return false;
  }

  // Go's encoding/json for one field of a struct decoded from the wire.
  void Emit(const Field& f, py::object v, py::dict& out, int depth) const {
    if (f.repeated || f.kind == Kind::kMap) {  // a nil slice or map: null unless omitempty
      if (v && py::len(v) > 0) Set(f, v, out);
      else if (f.list_items) Set(f, py::list(), out);
      else if (!f.omitempty) Set(f, py::none(), out);
      return;
    }
    if (f.pointer) {  // nil: null unless omitempty; else the value, zero or not
      if (v) Set(f, v, out);
      else if (!f.omitempty) Set(f, py::none(), out);
      return;
    }
    if (!v) v = ZeroValue(f.kind, f.message, depth);
    if (IsScalar(f.kind)) {
      if (!(f.omitempty && IsZero(v))) Set(f, v, out);
      return;
    }
    // A struct: always written (omitempty does not apply), unless omitzero and zero.
    if (f.omitzero && (v.is_none() || (py::isinstance<py::dict>(v) && py::len(v) == 0))) return;
    Set(f, v, out);
  }

  // An inline struct's fields go into its parent's object.
  static void Set(const Field& f, const py::object& v, py::dict& out) {
    if (!f.inlined) {
      out[f.key] = v;
    } else if (py::isinstance<py::dict>(v)) {
      for (auto item : py::reinterpret_borrow<py::dict>(v)) out[item.first] = item.second;
    }
  }

  // --- encoding ---------------------------------------------------------------

  // Encodes the message's fields found in `d` into `out`; answers how many of d's keys they
  // are (an inline field's included), so that the caller sees a key the schema lacks.
  int EncodeMessage(int index, const py::dict& d, std::string& out, const Path& path, int depth) const {
    if (depth > kMaxDepth) Refuse(path, "nested too deep");
    const Message& m = messages_[index];
    int found = 0;
    for (const Field& f : m.fields) {
      if (f.inlined) {  // its fields are in the parent's object
        std::string sub;
        found += EncodeMessage(f.message, d, sub, path, depth + 1);
        PutBytes(out, f.number, sub);
        continue;
      }
      PyObject* raw = PyDict_GetItem(d.ptr(), f.key.ptr());
      if (raw == nullptr) continue;
      ++found;
      if (raw == Py_None) continue;
      const py::handle v(raw);
      const Path where{&path, f.name};
      if (f.kind == Kind::kMap) {
        if (!py::isinstance<py::dict>(v)) Refuse(where, "must be an object");
        for (auto item : py::reinterpret_borrow<py::dict>(v)) {
          if (!PyUnicode_Check(item.first.ptr())) Refuse(where, "a key that is not a string");
          std::string entry;
          PutBytes(entry, 1, item.first.cast<std::string>());
          if (!item.second.is_none()) EncodeValue(f.value_kind, f.value_message, 2, item.second, entry, where, depth);
          PutBytes(out, f.number, entry);
        }
      } else if (f.repeated) {
        if (!py::isinstance<py::list>(v) && !py::isinstance<py::tuple>(v)) Refuse(where, "must be a list");
        for (auto item : v) EncodeValue(f.kind, f.message, f.number, item, out, where, depth);
      } else {
        EncodeValue(f.kind, f.message, f.number, v, out, where, depth);
      }
    }
    return found;
  }

  // Names the key of `d` the message's schema lacks (the slow path of an error).
  [[noreturn]] void RefuseUnknownKey(int index, const py::dict& d, const Path& path, bool root) const {
    for (auto item : d) {
      if (!PyUnicode_Check(item.first.ptr())) Refuse(path, "a key that is not a string");
      const std::string key = item.first.cast<std::string>();
      if (!messages_[index].keys.contains(key) && !(root && (key == "apiVersion" || key == "kind"))) {
        Refuse(Path{&path, key}, "not in the schema");
      }
    }
    Refuse(path, "a key is not in the schema");
  }

  void EncodeValue(Kind kind, int message, int number, const py::handle& v, std::string& out,
                   const Path& where, int depth) const {
    switch (kind) {
      case Kind::kString:
        if (!PyUnicode_Check(v.ptr())) Refuse(where, "must be a string");
        PutBytes(out, number, v.cast<std::string>());
        return;
      case Kind::kBytes: {
        std::string bytes;
        if (!PyUnicode_Check(v.ptr()) || !absl::Base64Unescape(v.cast<std::string>(), &bytes)) {
          Refuse(where, "must be a base64 string");
        }
        PutBytes(out, number, bytes);
        return;
      }
      case Kind::kBool:
        if (!PyBool_Check(v.ptr())) Refuse(where, "must be a boolean");
        PutTag(out, number, kVarint);
        PutVarint(out, v.ptr() == Py_True ? 1 : 0);
        return;
      case Kind::kInt:
        PutTag(out, number, kVarint);
        PutVarint(out, static_cast<uint64_t>(Int64(v, where)));
        return;
      case Kind::kDouble: {
        if (!PyFloat_Check(v.ptr()) && (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))) Refuse(where, "must be a number");
        const double d = PyFloat_AsDouble(v.ptr());
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        PutTag(out, number, kFixed64);
        for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
        return;
      }
      case Kind::kMessage: {
        if (!PyDict_Check(v.ptr())) Refuse(where, "must be an object");
        const auto d = py::reinterpret_borrow<py::dict>(v);
        std::string sub;
        if (EncodeMessage(message, d, sub, where, depth + 1) != py::len(d)) RefuseUnknownKey(message, d, where, false);
        PutBytes(out, number, sub);
        return;
      }
      default:
        PutBytes(out, number, EncodeSpecial(kind, v, where));
    }
  }

  static int64_t Int64(const py::handle& v, const Path& where) {
    if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr())) Refuse(where, "must be an integer");
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow != 0) Refuse(where, "out of the 64-bit range");
    return n;
  }

  std::string EncodeSpecial(Kind kind, const py::handle& v, const Path& where) const {
    std::string sub;
    switch (kind) {
      case Kind::kQuantity:
        if (PyUnicode_Check(v.ptr())) PutBytes(sub, 1, v.cast<std::string>());
        else PutBytes(sub, 1, std::to_string(Int64(v, where)));  // a float is left to JSON
        return sub;
      case Kind::kTime:
      case Kind::kMicroTime: {
        absl::Time t;
        std::string error;
        if (!PyUnicode_Check(v.ptr()) || !absl::ParseTime(absl::RFC3339_full, v.cast<std::string>(), &t, &error)) {
          Refuse(where, "must be an RFC 3339 time");
        }
        const int64_t seconds = absl::ToUnixSeconds(t);
        const int64_t nanos = absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds));
        if (seconds != 0) { PutTag(sub, 1, kVarint); PutVarint(sub, static_cast<uint64_t>(seconds)); }
        if (nanos != 0) { PutTag(sub, 2, kVarint); PutVarint(sub, static_cast<uint64_t>(nanos)); }
        return sub;
      }
      case Kind::kIntOrString:
        if (PyUnicode_Check(v.ptr())) {
          PutTag(sub, 1, kVarint);
          PutVarint(sub, 1);
          PutBytes(sub, 3, v.cast<std::string>());
        } else {
          const int64_t n = Int64(v, where);
          if (n < INT32_MIN || n > INT32_MAX) Refuse(where, "out of the 32-bit range");
          PutTag(sub, 2, kVarint);
          PutVarint(sub, static_cast<uint64_t>(n));
        }
        return sub;
      default: {  // RawExtension, FieldsV1: the JSON of the value
        const py::bytes json = dumps_(v);
        PutBytes(sub, 1, View(json));
        return sub;
      }
    }
  }

  std::vector<Message> messages_;
  absl::flat_hash_map<std::string, int> roots_;  // kind -> its message
  py::object loads_, dumps_;
  bool strict_;  // a field the schema lacks: ValueError, or left out
};

}  // namespace

void BindProtobuf(py::module_& m) {
  py::class_<Codec>(m, "ProtobufCodec",
                    "Kubernetes objects between their protobuf wire form and the dicts of their JSON form.")
      .def(py::init<const std::string&, py::object, py::object, bool, const std::vector<std::string>&>(),
           py::arg("schema"), py::arg("json_loads"), py::arg("json_dumps"), py::arg("strict") = true,
           py::arg("omit") = std::vector<std::string>{},
           "strict: a field the schema lacks raises ValueError (else it is left out); omit: JSON keys never "
           "decoded, wherever they are")
      .def("encode", &Codec::Encode, py::arg("obj"),
           "The object in the API server's protobuf envelope; ValueError naming the path if the schema cannot "
           "carry it exactly.")
      .def("decode", &Codec::Decode, py::arg("data"), "An object from its protobuf envelope, as its JSON's dict.")
      .def("decode_watch_event", &Codec::DecodeWatchEvent, py::arg("frame"),
           "One frame of a protobuf watch: {type, object}.");
}

}  // namespace volcanic::bindings
