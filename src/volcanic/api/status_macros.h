// Early-return helpers for absl::Status / absl::StatusOr.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define VOLCANIC_CONCAT_INNER(a, b) a##b
#define VOLCANIC_CONCAT(a, b) VOLCANIC_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): returns the status of expr when it is not OK.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::absl::Status _st = (expr);               \
    if (!_st.ok()) return _st;                 \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): lhs = *expr, or returns expr's status.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(VOLCANIC_CONCAT(_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(*tmp)
