/** A read-model timestamp as answers carry it: Postgres gives slonik a number (epoch ms), answers want ISO text. */
export const isoTime = (value: number | string | Date): string => new Date(value).toISOString();
