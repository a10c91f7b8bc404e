import { isWidgetDescriptor, type EventWidget, type WidgetDescriptor } from '@apphost/contracts';

/** An event's widgets as profile-bound descriptors: a legacy payload where a descriptor belongs fails the test. */
export function descriptors(event: { widgets?: EventWidget[] }): WidgetDescriptor[] {
  return (event.widgets ?? []).map((w) => {
    if (!isWidgetDescriptor(w)) throw new Error(`expected a widget descriptor, got the legacy payload ${JSON.stringify(w)}`);
    return w;
  });
}
