# Install-time half of CMakeLists.txt: puts one built variant into
# ${CMAKE_INSTALL_PREFIX}/build/<variant>/ in the chosen layout and writes its
# metadata.json (with the digest) last. Included by the install rule after the
# generated install_config.cmake has set the _i2g_* facts of the build.
#
# The layout is chosen when installing, so one build serves all three:
#   cmake --install <build>                       (configured defaults)
#   cmake -DIMG2GRAY_LAYOUT=flat -DIMG2GRAY_KERNEL_VERSION=2 \
#         -DCMAKE_INSTALL_PREFIX=<out> -P <build>/cmake_install.cmake
#
#   flat    build/<v>/{__init__.py,_ops.py,<id>.abi3.so,...,metadata.json}
#           what kernel-builder writes since Jul 2026
#   compat  flat + build/<v>/img2gray/__init__.py re-exporting it
#           (kernel-builder Nov 2025 - Jul 2026, most Hub repos today)
#   nested  build/<v>/img2gray/{__init__.py,_ops.py,<id>.abi3.so,...}
#           the layout before Nov 2025; with IMG2GRAY_METADATA=OFF exactly
#           as old builds were, without metadata.json
cmake_policy(PUSH)
cmake_policy(VERSION 3.22)

if(NOT DEFINED IMG2GRAY_LAYOUT)
  set(IMG2GRAY_LAYOUT "${_i2g_default_layout}")
endif()
if(NOT DEFINED IMG2GRAY_METADATA)
  set(IMG2GRAY_METADATA "${_i2g_default_metadata}")
endif()
if(NOT DEFINED IMG2GRAY_KERNEL_VERSION)
  set(IMG2GRAY_KERNEL_VERSION "${_i2g_default_kernel_version}")
endif()
if(NOT IMG2GRAY_LAYOUT MATCHES "^(flat|compat|nested)$")
  message(FATAL_ERROR "IMG2GRAY_LAYOUT must be flat, compat or nested, got '${IMG2GRAY_LAYOUT}'")
endif()
if(NOT IMG2GRAY_METADATA AND NOT IMG2GRAY_LAYOUT STREQUAL "nested")
  message(FATAL_ERROR "IMG2GRAY_METADATA=OFF needs IMG2GRAY_LAYOUT=nested: "
    "the ${IMG2GRAY_LAYOUT} layout has always come with a metadata.json, kernels reads it to load the variant")
endif()
if(NOT IMG2GRAY_KERNEL_VERSION MATCHES "^[0-9]+$")
  message(FATAL_ERROR "IMG2GRAY_KERNEL_VERSION must be a non-negative integer, got '${IMG2GRAY_KERNEL_VERSION}'")
endif()

set(_i2g_vdir "${CMAKE_INSTALL_PREFIX}/build/${_i2g_variant}")
set(_i2g_pkg_names "${_i2g_so_name}" "_ops.py" ${_i2g_py_names})
if(IMG2GRAY_LAYOUT STREQUAL "nested")
  set(_i2g_pkg_dir "${_i2g_vdir}/${_i2g_module}")
  set(_i2g_vkeep "${_i2g_module}")
else()
  set(_i2g_pkg_dir "${_i2g_vdir}")
  set(_i2g_vkeep ${_i2g_pkg_names})
  if(IMG2GRAY_LAYOUT STREQUAL "compat")
    list(APPEND _i2g_vkeep "${_i2g_module}")
  endif()
endif()
if(IMG2GRAY_METADATA)
  list(APPEND _i2g_vkeep "metadata.json")
endif()

# Drop whatever an earlier install left (another layout, an .so with an older
# id, __pycache__, a stale metadata.json.sigstore) so the variant holds exactly
# this build: the digest covers every file in it. Files that are already
# current stay untouched, which keeps re-installs idempotent.
function(_i2g_prune dir)
  if(NOT IS_DIRECTORY "${dir}")
    return()
  endif()
  file(GLOB _present LIST_DIRECTORIES true RELATIVE "${dir}" "${dir}/*" "${dir}/.*")
  foreach(_p IN LISTS _present)
    if(NOT _p IN_LIST ARGN)
      file(REMOVE_RECURSE "${dir}/${_p}")
    endif()
  endforeach()
endfunction()
_i2g_prune("${_i2g_vdir}" ${_i2g_vkeep})
if(IMG2GRAY_LAYOUT STREQUAL "nested")
  _i2g_prune("${_i2g_pkg_dir}" ${_i2g_pkg_names})
elseif(IMG2GRAY_LAYOUT STREQUAL "compat")
  _i2g_prune("${_i2g_vdir}/${_i2g_module}" "__init__.py")
endif()

file(INSTALL "${_i2g_so}" DESTINATION "${_i2g_pkg_dir}"
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                   WORLD_READ WORLD_EXECUTE)
file(INSTALL ${_i2g_py_files} "${_i2g_ops_py}" DESTINATION "${_i2g_pkg_dir}"
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
if(IMG2GRAY_LAYOUT STREQUAL "compat")
  file(INSTALL "${_i2g_compat_py}" DESTINATION "${_i2g_vdir}/${_i2g_module}" RENAME "__init__.py"
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endif()

if(IMG2GRAY_METADATA)
  set(_i2g_cmd "${_i2g_python}" -I "${_i2g_metadata_py}" write "${_i2g_vdir}"
    --name "${_i2g_name}" --id "${_i2g_id}" --version "${IMG2GRAY_KERNEL_VERSION}"
    --license "${_i2g_license}" --backend "${_i2g_backend}")
  if(_i2g_archs)
    list(JOIN _i2g_archs "," _i2g_archs_csv)
    list(APPEND _i2g_cmd "--archs=${_i2g_archs_csv}")
  endif()
  message(STATUS "Writing metadata: ${_i2g_vdir}/metadata.json "
    "(id ${_i2g_id}, version ${IMG2GRAY_KERNEL_VERSION}, layout ${IMG2GRAY_LAYOUT})")
  execute_process(COMMAND ${_i2g_cmd} RESULT_VARIABLE _i2g_rc)
  if(NOT _i2g_rc EQUAL 0)
    message(FATAL_ERROR "Writing ${_i2g_vdir}/metadata.json failed (${_i2g_rc})")
  endif()
endif()

cmake_policy(POP)
