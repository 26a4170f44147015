//===- tidal-opt.cpp - mlir-opt with tidal's dialects and passes ----------===//

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tidal/InitAll.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tidal::registerAllDialects(registry);
  mlir::tidal::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tidal optimizer driver\n", registry));
}
