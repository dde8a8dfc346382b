// A shared object without the plugin entry point: loading it as a plugin library must fail.
extern "C" __attribute__((visibility("default"))) int tensoracle_test_not_a_plugin() { return 1; }
