#pragma once
// Expected<T, E>: a value or one typed error. Our own small stand-in for
// std::expected, which clang 14 with libstdc++ 12 does not have. Result<T>
// (result.h) is Expected<T, dot::Error>; modules whose callers branch on a
// variant of their own error enum (Metewand's framing, correlation and
// handshake layers) use Expected with that enum directly.

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

namespace dot {

template <typename E>
struct Unexpected {
  E error;
};
template <typename E>
Unexpected<std::decay_t<E>> unexpected(E&& e) {
  return Unexpected<std::decay_t<E>>{std::forward<E>(e)};
}

template <typename T, typename E>
class [[nodiscard]] Expected {
 public:
  static_assert(!std::is_same_v<T, E>, "Expected<T, T> is ambiguous");

  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}            // NOLINT: implicit by design
  Expected(Unexpected<E> e) : v_(std::in_place_index<1>, std::move(e.error)) {}  // NOLINT
  Expected(E error) : v_(std::in_place_index<1>, std::move(error)) {}            // NOLINT

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  E& error() & {
    assert(!ok());
    return std::get<1>(v_);
  }
  const E& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  E&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, E> v_;
};

}  // namespace dot
