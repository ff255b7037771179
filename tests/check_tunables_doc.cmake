# SPDX-License-Identifier: BSD-3-Clause
# Fails when docs/tunables.md differs from what `tandem_info --tunables-md` prints.
execute_process(COMMAND ${INFO} --tunables-md OUTPUT_VARIABLE _now RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "tandem_info --tunables-md failed (${_rc})")
endif()
file(READ ${DOC} _doc)
if(NOT _now STREQUAL _doc)
  message(FATAL_ERROR "docs/tunables.md is stale: regenerate it with "
                      "build/bin/tandem_info --tunables-md > docs/tunables.md")
endif()
