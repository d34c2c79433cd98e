# Cross-builds tern for 64-bit ARM Linux with Debian's cross compiler; the tests run under qemu-user
# (scripts/test_aarch64.sh). Libraries come from Debian's arm64 multiarch packages.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# The arm64 libc6 that the multiarch -dev packages pull in is the one to run under: its loader is at
# /lib/ld-linux-aarch64.so.1. (qemu -L /usr/aarch64-linux-gnu would pair the cross package's loader with
# that libc, and a thread start then hangs.)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
