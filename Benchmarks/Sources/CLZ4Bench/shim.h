// liblz4's streaming and dictionary API, for measuring what the journal does
// not use (LogStore's own CLZ4 module is internal to the library).
#include <lz4.h>
