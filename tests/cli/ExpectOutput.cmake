# Runs `CLI SUB FILE [ARGS]` (SUB defaults to compile) and checks its exit code and that EXPECT
# appears in its output.
if(NOT DEFINED SUB)
    set(SUB compile)
endif()
execute_process(COMMAND ${CLI} ${SUB} ${FILE} ${ARGS}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXIT)
    message(FATAL_ERROR "exit code ${rc}, expected ${EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(FIND "${out}${err}" "${EXPECT}" pos)
if(pos EQUAL -1)
    message(FATAL_ERROR "expected `${EXPECT}` in the output\nstdout:\n${out}\nstderr:\n${err}")
endif()
