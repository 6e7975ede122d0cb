CREATE TABLE `leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`token` text NOT NULL,
	`expires_at` text NOT NULL
);
