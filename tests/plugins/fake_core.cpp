// Stands in for another release's libllama-core (soname libllama-core.so.0.1), so the
// second_core test plugin loads a second core beside the program's.
extern "C" __attribute__((visibility("default"))) int llama_fake_core_function() { return 1; }
