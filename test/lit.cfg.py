# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# lit configuration of the TLE compiler tests: every .mlir file under test/
# is a test; tle-opt comes from the build, FileCheck and mlir-translate from
# the LLVM 22 installation.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TLE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tle_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = [
    ToolSubst("tle-opt", unresolved="fatal"),
    ToolSubst("mlir-translate", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(
    tools, [config.tle_tools_dir, config.llvm_tools_dir]
)
