# Runs `stitchcuda-studio SOURCE --screenshot OUTPUT` and checks the result.
#   -DSTUDIO=<binary> -DSOURCE=<.cu> -DOUTPUT=<png> [-DEXPECT_FAILURE=ON] [-DEXTRA="--optimize --dock=Rubric"]
# A capture of a 1400x900 window with text in it compresses to far more than a blank one, so a
# size floor catches an empty or failed render.
file(REMOVE "${OUTPUT}")
separate_arguments(extra UNIX_COMMAND "${EXTRA}")
execute_process(
    COMMAND "${STUDIO}" "${SOURCE}" --screenshot "${OUTPUT}" ${extra}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err
    TIMEOUT 150)
message(STATUS "exit ${rc}\nstdout: ${out}\nstderr: ${err}")

if(EXPECT_FAILURE)
    if(rc EQUAL 0)
        message(FATAL_ERROR "expected a failure for ${SOURCE}, got exit 0")
    endif()
    if(NOT err MATCHES "does not exist")
        message(FATAL_ERROR "expected a clear message naming the missing file, got: ${err}")
    endif()
    if(EXISTS "${OUTPUT}")
        message(FATAL_ERROR "no screenshot should be written when the file cannot be opened")
    endif()
    return()
endif()

if(NOT rc EQUAL 0)
    message(FATAL_ERROR "stitchcuda-studio failed with ${rc}")
endif()
if(NOT EXISTS "${OUTPUT}")
    message(FATAL_ERROR "no screenshot at ${OUTPUT}")
endif()
file(SIZE "${OUTPUT}" size)
if(size LESS 40000)
    message(FATAL_ERROR "screenshot is only ${size} bytes: the window looks empty")
endif()
file(READ "${OUTPUT}" header LIMIT 8 HEX)
if(NOT header STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "screenshot is not a PNG (header ${header})")
endif()
message(STATUS "screenshot ${OUTPUT}: ${size} bytes")
