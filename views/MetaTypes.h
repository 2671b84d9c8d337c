#pragma once
// Core value types that cross Qt signals (queued connections, QSignalSpy, QVariant).
//   core structs -> Q_DECLARE_METATYPE -> signals of CompileController and the device probe

#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"

#include <QMetaType>

Q_DECLARE_METATYPE(stitch::Error)
Q_DECLARE_METATYPE(stitch::cuda::CompileResult)
