// SPDX-License-Identifier: Apache-2.0
// BLOBTABLE_EXPORT marks the public API: the only symbols the shared
// library exports (everything else is compiled hidden, so internals cannot
// be linked against by accident, and the library loads faster).
#ifndef BLOBTABLE_EXPORT_H_
#define BLOBTABLE_EXPORT_H_

#define BLOBTABLE_EXPORT [[gnu::visibility("default")]]
// A member of an exported class that stays inside the library: the private
// constructors that take internal types, so none of those is in the ABI.
#define BLOBTABLE_HIDDEN [[gnu::visibility("hidden")]]

#endif  // BLOBTABLE_EXPORT_H_
