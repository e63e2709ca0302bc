export * from './mail-bus.ts';
export { EventLogMailBus, eventLogConsumerName, mailJobFromEvent } from './event-log.ts';
export { KafkaMailBus, mailTopicName, type KafkaMailBusOptions } from './kafka.ts';
