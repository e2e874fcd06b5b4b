# The registry's list of backends: the one file outside its own folder that a new
# backend touches. Each line names a folder under daemon/devices/ that defines the
# target accord_devices_<name> and, in <name>_registration.cpp, the function
# accord::devices::register_<name>(BackendCatalog&). Order is opening order; the host
# comes first and is always built. OPTION names the CMake switch of an optional one.
accord_device_backend(host)
accord_device_backend(null)
accord_device_backend(cuda OPTION ACCORD_ENABLE_CUDA)
accord_device_backend(level_zero OPTION ACCORD_ENABLE_LEVEL_ZERO)
