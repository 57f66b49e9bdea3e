// The one builder of the commands reverify suggests (core/suggested_command.hpp): every path in
// them is one shell word, so each runs as printed. The suggestions that no test can provoke
// cheaply (tests/daemon/suggested_commands_itest.sh lists them) are checked through it here.
#include "core/suggested_command.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace reverify;

TEST_CASE("reverify_command: reverify, its arguments, then the scope when there is one") {
  CHECK(reverify_command("plan", "") == "reverify plan");
  CHECK(reverify_command("gate m@1 --max-age 7d", "--config /etc/reverify/reverify.yaml") ==
        "reverify gate m@1 --max-age 7d --config /etc/reverify/reverify.yaml");
  CHECK(suggested_command("calibrate m@1 --until-power", "--config /etc/r.yaml") ==
        "`reverify calibrate m@1 --until-power --config /etc/r.yaml`");
}

TEST_CASE("config_scope: the config's absolute path as one shell word, however it is named") {
  CHECK(config_scope("/etc/reverify/reverify.yaml") == "--config /etc/reverify/reverify.yaml");
  CHECK(config_scope("/srv/rev erify's $state (\"x\")/re verify.yaml") ==
        "--config '/srv/rev erify'\\''s $state (\"x\")/re verify.yaml'");
  // A relative path is made absolute: the command runs from any folder.
  const std::string relative = config_scope("reverify.yaml");
  CHECK(relative.starts_with("--config /"));
  CHECK(relative.ends_with("/reverify.yaml"));
}

TEST_CASE("suggested_commands_in: the reverify commands a text suggests, in order, whole") {
  const std::string scope = config_scope("/srv/it's/r.yaml");
  const std::string text = "uncalibrated; calibrate with " +
                           suggested_command("calibrate m@1 --seeds 10", scope) +
                           " (record with `reverify capture --seed-runs DIR`; `git diff HEAD` "
                           "is not ours), then `reverifyd --config x --check-config`";
  CHECK(suggested_commands_in(text) ==
        std::vector<std::string>{"reverify calibrate m@1 --seeds 10 " + scope,
                                 "reverify capture --seed-runs DIR",
                                 "reverifyd --config x --check-config"});
  CHECK(suggested_commands_in("no command here").empty());
  CHECK(suggested_commands_in("an open `reverify plan").empty());
}
