// Exposes liblz4's block API (lz4.h) to Swift.
#include <lz4.h>
