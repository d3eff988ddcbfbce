# Registers every doctest case of a test binary as its own CTest test.
#
# Run after each build of the binary (CMakeLists.txt, POST_BUILD):
#   cmake -D TEST_EXECUTABLE=... -D WORKING_DIR=... -D CTEST_FILE=... -P ctest_cases.cmake
# It asks the binary for its cases (--list-test-cases; cases marked
# doctest::skip() are not listed) and writes CTEST_FILE, which CTest includes.
#
# Why not doctest's own doctest_discover_tests: it splits a case name at ';'
# (CMake's list separator), and a half name selects no case, which doctest
# counts as success. Here names are taken whole, and each test passes only if
# doctest reports exactly one case run and passed.

execute_process(
  COMMAND "${TEST_EXECUTABLE}" --list-test-cases
  OUTPUT_VARIABLE output
  RESULT_VARIABLE result
  WORKING_DIRECTORY "${WORKING_DIR}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --list-test-cases failed (${result}):\n${output}")
endif()

# Keep ';', '[' and ']' out of CMake's list handling while splitting lines.
string(REPLACE ";" "@semicolon@" output "${output}")
string(REPLACE "[" "@lbracket@" output "${output}")
string(REPLACE "]" "@rbracket@" output "${output}")
string(REPLACE "\n" ";" lines "${output}")

set(script "")
set(count 0)
foreach(line IN LISTS lines)
  if(line STREQUAL "" OR line MATCHES "^=+$" OR line MATCHES "^\\[doctest\\]" OR
     line MATCHES "^@lbracket@doctest@rbracket@")
    continue()
  endif()
  string(REPLACE "@semicolon@" ";" name "${line}")
  string(REPLACE "@lbracket@" "[" name "${name}")
  string(REPLACE "@rbracket@" "]" name "${name}")
  if(name MATCHES "]==]")
    message(FATAL_ERROR "test case name cannot be quoted for CTest: ${name}")
  endif()
  # doctest filters split at ',' unless escaped; '*' and '?' are wildcards
  # that also match themselves.
  string(REPLACE "," "\\," filter "${name}")
  string(APPEND script
    "add_test([==[${name}]==] \"${TEST_EXECUTABLE}\" [==[--test-case=${filter}]==])\n"
    "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY \"${WORKING_DIR}\"\n"
    "  PASS_REGULAR_EXPRESSION [==[test cases: +1 \\| +1 passed \\| +0 failed]==])\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test case")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
