// A module without any gpu.func kernel.
module {
}
