/**
 * The digits of a phone number, which is what inbound texts are matched on: contacts hold numbers as typed
 * ("+1 (555) 010-2000"), providers send E.164 ("+15550102000"). Numbers written without their country code do not
 * match an E.164 sender; that is the price of not guessing a country.
 */
export function phoneDigits(phone: string): string {
  return phone.replace(/\D/g, '');
}
