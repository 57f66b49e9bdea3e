# `cmake --install` lays reverify out like a packaged daemon (docs/operating.md "Install"):
#   <prefix>/bin/reverify, <prefix>/bin/reverifyd
#   <prefix>/lib/reverify/libreverify_*.so        (development builds only; release links statically)
#   <prefix>/lib/systemd/system/reverifyd.service (ExecStart and Documentation point into <prefix>;
#                                                  systemd reads /usr/local/lib/systemd/system too)
#   <prefix>/lib/sysusers.d/reverify.conf, <prefix>/lib/tmpfiles.d/reverify.conf
#   <prefix>/share/reverify/reverify.yaml          (config/production.yaml: every key, its default)
#   <prefix>/share/reverify/reverifyd-docker.conf  (drop-in: the docker group, opt-in)
#   <prefix>/share/reverify/prometheus/reverify.rules.yml (+ its promtool tests), alert rules
#   <prefix>/share/reverify/grafana/reverify-dashboard.json
#   <prefix>/share/bash-completion/completions/reverify  (`reverify completion bash`, generated)
#   <prefix>/share/doc/reverify/README.md, CHANGELOG.md, docs/ (the guides; the unit's Documentation=)
#   /etc/reverify/reverify.yaml                    (the template, only when no config is there yet)
# DESTDIR is honoured everywhere (packaging, and the install test).

# Relative paths are under the install prefix (`cmake --install --prefix` may change it).
set(REVERIFY_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE PATH "where reverifyd.service goes")
set(REVERIFY_SYSUSERS_DIR "lib/sysusers.d" CACHE PATH "where the sysusers.d snippet goes")
set(REVERIFY_TMPFILES_DIR "lib/tmpfiles.d" CACHE PATH "where the tmpfiles.d snippet goes")
# systemd's ConfigurationDirectory= is always under /etc, whatever the prefix.
set(REVERIFY_CONFIG_DIR "/etc/reverify" CACHE PATH "where reverifyd reads reverify.yaml")

install(TARGETS reverify reverifyd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Every shared library of ours that the binaries link (found, not listed, so a new layer is
# installed without editing this file).
if(BUILD_SHARED_LIBS)
  get_property(reverify_dirs DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
  foreach(dir ${reverify_dirs})
    get_property(dir_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${dir_targets})
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "SHARED_LIBRARY" AND target MATCHES "^reverify_")
        # Each library finds its neighbours (RUNPATH applies to an object's own dependencies).
        set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN")
        install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/reverify)
      endif()
    endforeach()
  endforeach()
endif()

# The unit as shipped names /usr/bin/reverifyd and /usr/share/doc/reverify (the packaged layout);
# it is rewritten at install time to name where this install puts them (the prefix is known only
# then).
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/systemd/reverifyd.service\" unit)
  string(REPLACE \"/usr/bin/reverifyd\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/reverifyd\"
         unit \"\${unit}\")
  string(REPLACE \"/usr/share/doc/reverify\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\"
         unit \"\${unit}\")
  string(REPLACE \"/etc/reverify\" \"${REVERIFY_CONFIG_DIR}\" unit \"\${unit}\")
  set(dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${REVERIFY_SYSTEMD_UNIT_DIR}\")
  message(STATUS \"Installing: \${dir}/reverifyd.service\")
  file(MAKE_DIRECTORY \"\${dir}\")
  file(WRITE \"\${dir}/reverifyd.service\" \"\${unit}\")
")
install(FILES systemd/reverify.sysusers.conf DESTINATION ${REVERIFY_SYSUSERS_DIR}
        RENAME reverify.conf)
install(FILES systemd/reverify.tmpfiles.conf DESTINATION ${REVERIFY_TMPFILES_DIR}
        RENAME reverify.conf)
install(FILES systemd/reverifyd-docker.conf DESTINATION ${CMAKE_INSTALL_DATADIR}/reverify)
install(FILES config/production.yaml DESTINATION ${CMAKE_INSTALL_DATADIR}/reverify
        RENAME reverify.yaml)
install(FILES README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md"
        PATTERN "*.webp")
install(FILES contrib/prometheus/reverify.rules.yml contrib/prometheus/reverify.rules.test.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/reverify/prometheus)
install(FILES contrib/grafana/reverify-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/reverify/grafana)
# The completion script comes from the built CLI's own command tree.
install(CODE "
  set(dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/bash-completion/completions\")
  message(STATUS \"Installing: \${dir}/reverify\")
  file(MAKE_DIRECTORY \"\${dir}\")
  execute_process(COMMAND \"$<TARGET_FILE:reverify>\" completion bash
                  OUTPUT_FILE \"\${dir}/reverify\" RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR \"reverify completion bash failed: \${status}\")
  endif()
")

# The config template goes to /etc only when there is no config yet: an upgrade never overwrites
# what an operator wrote. (file(INSTALL) puts DESTDIR in front of DESTINATION itself.)
install(CODE "
  set(config \"\$ENV{DESTDIR}${REVERIFY_CONFIG_DIR}/reverify.yaml\")
  if(EXISTS \"\${config}\")
    message(STATUS \"Keeping: \${config} (the new template is <prefix>/${CMAKE_INSTALL_DATADIR}/reverify)\")
  else()
    file(INSTALL \"${PROJECT_SOURCE_DIR}/config/production.yaml\"
         DESTINATION \"${REVERIFY_CONFIG_DIR}\" RENAME reverify.yaml
         PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  endif()
")
