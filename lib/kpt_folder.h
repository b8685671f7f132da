/* kpt_folder.h - the recordings of a folder: the one listing of a
 * baseline's session folder (analyzer/baseline) and of a folder given to
 * diff (analyzer/diff).
 *
 * kpt_recording_name: 1 when a folder entry's name is a recording's: it
 * ends in ".kpt" after at least one character and does not start with '.'
 * (hidden files and the temporaries an update writes are not sessions).
 *
 * kpt_folder_recordings: those names in the folder open as fd, sorted by
 * strcmp (session names start with their time: oldest first). It reads a
 * duplicate of fd, rewound; fd stays open. shown names the folder in
 * messages. *names: a malloc'd array of malloc'd strings (NULL when n is
 * 0), freed with kpt_names_free. 0, KPT_E_IO, KPT_E_NOMEM. O(n log n).
 */
#ifndef KPT_FOLDER_H
#define KPT_FOLDER_H

#include <stddef.h>

#include "kpt_err.h"

int kpt_recording_name(const char *name);
int kpt_folder_recordings(int fd, const char *shown, char ***names, size_t *n, struct kpt_diag *d);
void kpt_names_free(char **names, size_t n); /* accepts NULL */

#endif
