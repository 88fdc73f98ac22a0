// SPDX-License-Identifier: Apache-2.0
// FunctionRef<R(Args...)>: a call back that refers to a callable owned by
// the caller, for the duration of the call it is passed to. Unlike
// std::function it never allocates (a lambda capturing more than two
// references would, on every read or listed row).
#ifndef BLOBTABLE_UTIL_FUNCTION_REF_H_
#define BLOBTABLE_UTIL_FUNCTION_REF_H_

#include <memory>
#include <type_traits>
#include <utility>

namespace blobtable::internal {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename Fn>
  requires(!std::is_same_v<std::remove_cvref_t<Fn>, FunctionRef> &&
           std::is_invocable_r_v<R, Fn&, Args...>)
      FunctionRef(Fn&& fn)  // implicit on purpose: a lambda converts
      : fn_(const_cast<void*>(static_cast<const void*>(std::addressof(fn)))),
        call_([](void* f, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<Fn>*>(f))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(fn_, std::forward<Args>(args)...); }

 private:
  void* fn_;
  R (*call_)(void*, Args...);
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_FUNCTION_REF_H_
