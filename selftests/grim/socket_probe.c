// SPDX-License-Identifier: GPL-2.0
/*
 * socket_probe FAMILY TYPE [PROTOCOL]
 *
 * Try socket(FAMILY, TYPE, PROTOCOL) with numeric arguments and report the
 * result.  Exit status: 0 if the socket was created, 1 otherwise.  Lets the
 * shell tests probe a protocol family before user-space headers know it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s FAMILY TYPE [PROTOCOL]\n", argv[0]);
		return 2;
	}
	fd = socket(atoi(argv[1]), atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 0);
	if (fd < 0) {
		printf("socket(%s, %s): %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	printf("socket(%s, %s): ok\n", argv[1], argv[2]);
	close(fd);
	return 0;
}
