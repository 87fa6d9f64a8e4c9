/* aptus-info --mpit (mpit_list.c). */
#ifndef APTUS_INFO_MPIT_LIST_H
#define APTUS_INFO_MPIT_LIST_H

/* Lists every category, variable and event through MPI_T: 0, or 2 after a message. */
int aptus_info_mpit(void);

#endif
