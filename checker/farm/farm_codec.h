// How a task farm's results travel between processes (checker/farm/mpi_farm.h):
// FarmCodec<Result> turns a result into bytes and back, exactly (every field,
// doubles bit for bit). A farm whose Result has a codec can be spread over
// MPI ranks; one without (ParallelFor's tasks, which store their own results)
// always runs on the threads of each process.
//
// Bytes are written in the machine's own byte order: every rank of one job
// runs the same binary on the same architecture. The layout is not a file
// format; it may change with any commit.
//
// A codec is a specialization declared next to the type it encodes, so that
// every farm of that type sees it:
//   template <> struct FarmCodec<T> {
//     static void Encode(const T&, ByteWriter&);
//     static T Decode(ByteReader&);  // throws Error on truncated bytes
//   };
#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "model/error.h"

namespace dtr {

class ByteWriter {
 public:
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void Put(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void PutString(std::string_view s) {
    Put<uint64_t>(s.size());
    bytes_.append(s);
  }
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void PutVector(const std::vector<T>& v) {
    Put<uint64_t>(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  T Get() {
    T v;
    std::memcpy(&v, Take(sizeof(T)), sizeof(T));
    return v;
  }
  std::string GetString() {
    size_t n = Count(1);
    return std::string(Take(n), n);
  }
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> GetVector() {
    size_t n = Count(sizeof(T));
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), Take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  // A count of items of `item_size` bytes that the rest can hold.
  size_t Count(size_t item_size) {
    uint64_t n = Get<uint64_t>();
    if (n > (bytes_.size() - pos_) / item_size) throw Error("farm message: truncated bytes");
    return static_cast<size_t>(n);
  }
  const char* Take(size_t n) {
    if (n > bytes_.size() - pos_) throw Error("farm message: truncated bytes");
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

template <typename T>
struct FarmCodec;  // specialized next to each type a distributed farm returns

// A result type whose farms may be spread over processes.
template <typename T>
concept FarmEncodable = requires(const T& v, ByteWriter& w, ByteReader& r) {
  FarmCodec<T>::Encode(v, w);
  { FarmCodec<T>::Decode(r) } -> std::same_as<T>;
};

template <typename T>
std::string EncodeForFarm(const T& v) {
  ByteWriter w;
  FarmCodec<T>::Encode(v, w);
  return std::move(w.bytes());
}

template <typename T>
T DecodeForFarm(std::string_view bytes) {
  ByteReader r(bytes);
  T v = FarmCodec<T>::Decode(r);
  if (!r.done()) throw Error("farm message: bytes left over after the result");
  return v;
}

}  // namespace dtr
