#include "pager/pager_config.hpp"

#include "pager/router.hpp"

namespace reverify {

const std::string& severity_of(const SeverityMap& map, VerdictClass cls) {
  return is_failure(cls) ? map.failed : is_error(cls) ? map.error : map.notice;
}

Status check_owner_routed(const PagerConfig& config, const std::string& owner) {
  if (find_route(config, owner))
    return {};
  return make_error(ErrorCode::invalid_argument,
                    "pager.routes: no route for owner \"" + owner +
                        "\" and no \"*\" route; add one so its pages are not dropped");
}

}  // namespace reverify
