# Run by cmake --install (install(SCRIPT) in CMakeLists.txt), and so by
# CPack for the Debian package: installs the systemd unit and the defaults
# file where the install prefix puts them, with their paths following it.
#
#   prefix /usr (the package):  /lib/systemd/system/hello-family@.service,
#                               /etc/default/hello-family, ExecStart=/usr/bin/...
#   any other, e.g. /opt/hf:    /opt/hf/lib/systemd/system/hello-family@.service,
#                               /opt/hf/etc/default/hello-family, ExecStart=/opt/hf/bin/...
#
# /usr's configuration lives in /etc and its units in /lib/systemd/system
# (Debian 12's unit directory, the same as /usr/lib/systemd/system there);
# any other prefix keeps both under itself, so that an install into
# /usr/local or /opt writes nothing outside it. Reads HELLO_SOURCE_DIR,
# HELLO_BINARY_DIR and HELLO_BINDIR (set by CMakeLists.txt before this runs)
# and CMAKE_INSTALL_PREFIX (cmake --install --prefix, or CPack's /usr).
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(unit_dir /lib/systemd/system)
  set(etc_dir /etc)
else()
  set(unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
  set(etc_dir ${CMAKE_INSTALL_PREFIX}/etc)
endif()
if(IS_ABSOLUTE "${HELLO_BINDIR}")
  set(bin_dir ${HELLO_BINDIR})
else()
  set(bin_dir ${CMAKE_INSTALL_PREFIX}/${HELLO_BINDIR})
endif()

# The sources name the package's paths: /usr/bin/hello-NAME, /etc/default/
# and /etc/hello-family/. The copies installed are written into the build
# directory first, so that file(INSTALL) applies DESTDIR and lists them;
# into a folder of this install's own (CPack's, a test's into a temporary
# DESTDIR), removed after.
string(MD5 key "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(staging ${HELLO_BINARY_DIR}/package-files/installing-${key})
foreach(source IN ITEMS systemd/hello-family@.service default/hello-family)
  file(READ ${HELLO_SOURCE_DIR}/packaging/${source} text)
  string(REPLACE "/usr/bin/hello-" "${bin_dir}/hello-" text "${text}")
  string(REPLACE "/etc/default/hello-family" "${etc_dir}/default/hello-family" text "${text}")
  string(REPLACE "/etc/hello-family/" "${etc_dir}/hello-family/" text "${text}")
  get_filename_component(name ${source} NAME)
  file(WRITE ${staging}/${name} "${text}")
endforeach()
file(INSTALL DESTINATION ${unit_dir} TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES ${staging}/hello-family@.service)
file(INSTALL DESTINATION ${etc_dir}/default TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES ${staging}/hello-family)
file(REMOVE_RECURSE ${staging})
