#include "pager/notifier.hpp"

namespace reverify {

const char* to_string(PageAction action) {
  switch (action) {
    case PageAction::trigger:
      return "trigger";
    case PageAction::resolve:
      return "resolve";
    case PageAction::notice:
      return "notice";
  }
  return "unknown";
}

std::optional<PageAction> parse_page_action(std::string_view text) {
  for (auto action : {PageAction::trigger, PageAction::resolve, PageAction::notice}) {
    if (text == to_string(action))
      return action;
  }
  return std::nullopt;
}

}  // namespace reverify
