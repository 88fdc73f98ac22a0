// BLOBTABLE_EXPORT marks the public API: the only symbols the shared
// library exports (everything else is compiled hidden, so internals cannot
// be linked against by accident, and the library loads faster).
#ifndef BLOBTABLE_EXPORT_H_
#define BLOBTABLE_EXPORT_H_

#define BLOBTABLE_EXPORT [[gnu::visibility("default")]]

#endif  // BLOBTABLE_EXPORT_H_
