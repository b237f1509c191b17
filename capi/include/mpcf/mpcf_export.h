/* Symbol visibility for the libmpcf public API. The library is built with
 * hidden visibility by default; MPCF_API marks the exported entry points.
 * (A linker version script additionally keeps everything but mpcf_* local.) */
#ifndef MPCF_MPCF_EXPORT_H
#define MPCF_MPCF_EXPORT_H

#if defined(_WIN32)
#if defined(MPCF_BUILDING_LIBRARY)
#define MPCF_API __declspec(dllexport)
#else
#define MPCF_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define MPCF_API __attribute__((visibility("default")))
#else
#define MPCF_API
#endif

#endif /* MPCF_MPCF_EXPORT_H */
