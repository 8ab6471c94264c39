//===- LoadKernel.cpp - From the input file to a launchable kernel --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A cuda bundle is used as is (PTX loaded by the CUDA driver); a host bundle
// or an MLIR file needs the in-process compiler, which only a tlerun built
// with TLE_ENABLE_COMPILER has.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "tle/tle.h"

using namespace tle::run;

void tle::run::registerSites(const Bundle &bundle) {
  // A text that collides with another one's id keeps the first: the
  // report then names the other line, which the table says it holds.
  for (const BundleSite &site : bundle.sites)
    tleSiteRegister(site.id, site.text.c_str());
}

bool tle::run::loadKernel(const Options &options, LoadedKernel &out,
                          std::string &error) {
  std::string text;
  if (!readInputFile(options.input, text, error))
    return false;

  if (!looksLikeBundle(text)) {
    if (!haveCompiler()) {
      error = "'" + options.input +
              "' is not a bundle, and this tlerun was built without the "
              "compiler (TLE_ENABLE_COMPILER=OFF), so it runs cuda bundles "
              "only: make one with `tlec --target=cuda` where LLVM is "
              "installed";
      return false;
    }
    return compileKernel(options, options.input, text, nullptr, out, error);
  }

  Bundle bundle;
  if (!parseBundle(text, bundle, error)) {
    error = options.input + ": " + error;
    return false;
  }
  registerSites(bundle);
  if (bundle.target != options.target) {
    error = "'" + options.input + "' is a " + bundle.target +
            " bundle but --target is " + options.target;
    return false;
  }
  const BundleKernel *meta = bundle.findKernel(options.kernel);
  if (!meta) {
    error = "no kernel '" + options.kernel + "' in '" + options.input +
            "' (it has:";
    for (const BundleKernel &kernel : bundle.kernels)
      error += " " + kernel.name;
    error += ")";
    return false;
  }
  if (bundle.target == "cuda") {
    if (bundle.format != "ptx") {
      error = "cuda bundle format '" + bundle.format + "' is not supported";
      return false;
    }
    out.meta = *meta;
    out.ptx = bundle.code;
    return true;
  }
  if (!haveCompiler()) {
    error = "host bundles hold LLVM IR, which needs a tlerun built with the "
            "compiler (TLE_ENABLE_COMPILER=ON)";
    return false;
  }
  return compileKernel(options, options.input, bundle.code, &bundle, out,
                       error);
}
