#pragma once
// The state of one page's delivery to one sender (page_deliveries.state): pending until the
// sender took it or reverify gave up on it.

#include "core/enum_names.hpp"

namespace reverify {

enum class DeliveryState { pending, sent, failed };

template <>
struct EnumNames<DeliveryState> {
  static constexpr EnumName<DeliveryState> table[] = {
      {DeliveryState::pending, "pending"},
      {DeliveryState::sent, "sent"},
      {DeliveryState::failed, "failed"},
  };
};

}  // namespace reverify
