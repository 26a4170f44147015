//===- TidalDialect.h - the tidal dialect -----------------------*- C++ -*-===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALDIALECT_H
#define TIDAL_DIALECT_TIDAL_IR_TIDALDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tidal/Dialect/Tidal/IR/TidalOpsDialect.h.inc"

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALDIALECT_H
