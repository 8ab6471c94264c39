// Not valid MLIR.
module {
  gpu.func @k(
}
