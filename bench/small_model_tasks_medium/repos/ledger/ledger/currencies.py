"""The ISO 4217 currencies: code, numeric code, minor unit digits and name."""

from __future__ import annotations

from typing import NamedTuple

DEFAULT_CURRENCY = "EUR"


class Currency(NamedTuple):
    """One currency as ISO 4217 lists it."""

    code: str
    numeric: int
    digits: int  # decimals of its minor unit: 2 for cents, 0 for the yen, 3 for the dinar
    name: str


CURRENCIES: dict[str, Currency] = {
    "AED": Currency("AED", 784, 2, "UAE Dirham"),
    "AFN": Currency("AFN", 971, 2, "Afghani"),
    "ALL": Currency("ALL", 8, 2, "Lek"),
    "AMD": Currency("AMD", 51, 2, "Armenian Dram"),
    "ANG": Currency("ANG", 532, 2, "Netherlands Antillean Guilder"),
    "AOA": Currency("AOA", 973, 2, "Kwanza"),
    "ARS": Currency("ARS", 32, 2, "Argentine Peso"),
    "AUD": Currency("AUD", 36, 2, "Australian Dollar"),
    "AWG": Currency("AWG", 533, 2, "Aruban Florin"),
    "AZN": Currency("AZN", 944, 2, "Azerbaijan Manat"),
    "BAM": Currency("BAM", 977, 2, "Convertible Mark"),
    "BBD": Currency("BBD", 52, 2, "Barbados Dollar"),
    "BDT": Currency("BDT", 50, 2, "Taka"),
    "BGN": Currency("BGN", 975, 2, "Bulgarian Lev"),
    "BHD": Currency("BHD", 48, 3, "Bahraini Dinar"),
    "BIF": Currency("BIF", 108, 0, "Burundi Franc"),
    "BMD": Currency("BMD", 60, 2, "Bermudian Dollar"),
    "BND": Currency("BND", 96, 2, "Brunei Dollar"),
    "BOB": Currency("BOB", 68, 2, "Boliviano"),
    "BRL": Currency("BRL", 986, 2, "Brazilian Real"),
    "BSD": Currency("BSD", 44, 2, "Bahamian Dollar"),
    "BTN": Currency("BTN", 64, 2, "Ngultrum"),
    "BWP": Currency("BWP", 72, 2, "Pula"),
    "BYN": Currency("BYN", 933, 2, "Belarusian Ruble"),
    "BZD": Currency("BZD", 84, 2, "Belize Dollar"),
    "CAD": Currency("CAD", 124, 2, "Canadian Dollar"),
    "CDF": Currency("CDF", 976, 2, "Congolese Franc"),
    "CHF": Currency("CHF", 756, 2, "Swiss Franc"),
    "CLP": Currency("CLP", 152, 0, "Chilean Peso"),
    "CNY": Currency("CNY", 156, 2, "Yuan Renminbi"),
    "COP": Currency("COP", 170, 2, "Colombian Peso"),
    "CRC": Currency("CRC", 188, 2, "Costa Rican Colon"),
    "CUP": Currency("CUP", 192, 2, "Cuban Peso"),
    "CVE": Currency("CVE", 132, 2, "Cabo Verde Escudo"),
    "CZK": Currency("CZK", 203, 2, "Czech Koruna"),
    "DJF": Currency("DJF", 262, 0, "Djibouti Franc"),
    "DKK": Currency("DKK", 208, 2, "Danish Krone"),
    "DOP": Currency("DOP", 214, 2, "Dominican Peso"),
    "DZD": Currency("DZD", 12, 2, "Algerian Dinar"),
    "EGP": Currency("EGP", 818, 2, "Egyptian Pound"),
    "ERN": Currency("ERN", 232, 2, "Nakfa"),
    "ETB": Currency("ETB", 230, 2, "Ethiopian Birr"),
    "EUR": Currency("EUR", 978, 2, "Euro"),
    "FJD": Currency("FJD", 242, 2, "Fiji Dollar"),
    "FKP": Currency("FKP", 238, 2, "Falkland Islands Pound"),
    "GBP": Currency("GBP", 826, 2, "Pound Sterling"),
    "GEL": Currency("GEL", 981, 2, "Lari"),
    "GHS": Currency("GHS", 936, 2, "Ghana Cedi"),
    "GIP": Currency("GIP", 292, 2, "Gibraltar Pound"),
    "GMD": Currency("GMD", 270, 2, "Dalasi"),
    "GNF": Currency("GNF", 324, 0, "Guinean Franc"),
    "GTQ": Currency("GTQ", 320, 2, "Quetzal"),
    "GYD": Currency("GYD", 328, 2, "Guyana Dollar"),
    "HKD": Currency("HKD", 344, 2, "Hong Kong Dollar"),
    "HNL": Currency("HNL", 340, 2, "Lempira"),
    "HTG": Currency("HTG", 332, 2, "Gourde"),
    "HUF": Currency("HUF", 348, 2, "Forint"),
    "IDR": Currency("IDR", 360, 2, "Rupiah"),
    "ILS": Currency("ILS", 376, 2, "New Israeli Sheqel"),
    "INR": Currency("INR", 356, 2, "Indian Rupee"),
    "IQD": Currency("IQD", 368, 3, "Iraqi Dinar"),
    "IRR": Currency("IRR", 364, 2, "Iranian Rial"),
    "ISK": Currency("ISK", 352, 0, "Iceland Krona"),
    "JMD": Currency("JMD", 388, 2, "Jamaican Dollar"),
    "JOD": Currency("JOD", 400, 3, "Jordanian Dinar"),
    "JPY": Currency("JPY", 392, 0, "Yen"),
    "KES": Currency("KES", 404, 2, "Kenyan Shilling"),
    "KGS": Currency("KGS", 417, 2, "Som"),
    "KHR": Currency("KHR", 116, 2, "Riel"),
    "KMF": Currency("KMF", 174, 0, "Comorian Franc"),
    "KPW": Currency("KPW", 408, 2, "North Korean Won"),
    "KRW": Currency("KRW", 410, 0, "Won"),
    "KWD": Currency("KWD", 414, 3, "Kuwaiti Dinar"),
    "KYD": Currency("KYD", 136, 2, "Cayman Islands Dollar"),
    "KZT": Currency("KZT", 398, 2, "Tenge"),
    "LAK": Currency("LAK", 418, 2, "Lao Kip"),
    "LBP": Currency("LBP", 422, 2, "Lebanese Pound"),
    "LKR": Currency("LKR", 144, 2, "Sri Lanka Rupee"),
    "LRD": Currency("LRD", 430, 2, "Liberian Dollar"),
    "LSL": Currency("LSL", 426, 2, "Loti"),
    "LYD": Currency("LYD", 434, 3, "Libyan Dinar"),
    "MAD": Currency("MAD", 504, 2, "Moroccan Dirham"),
    "MDL": Currency("MDL", 498, 2, "Moldovan Leu"),
    "MGA": Currency("MGA", 969, 2, "Malagasy Ariary"),
    "MKD": Currency("MKD", 807, 2, "Denar"),
    "MMK": Currency("MMK", 104, 2, "Kyat"),
    "MNT": Currency("MNT", 496, 2, "Tugrik"),
    "MOP": Currency("MOP", 446, 2, "Pataca"),
    "MRU": Currency("MRU", 929, 2, "Ouguiya"),
    "MUR": Currency("MUR", 480, 2, "Mauritius Rupee"),
    "MVR": Currency("MVR", 462, 2, "Rufiyaa"),
    "MWK": Currency("MWK", 454, 2, "Malawi Kwacha"),
    "MXN": Currency("MXN", 484, 2, "Mexican Peso"),
    "MYR": Currency("MYR", 458, 2, "Malaysian Ringgit"),
    "MZN": Currency("MZN", 943, 2, "Mozambique Metical"),
    "NAD": Currency("NAD", 516, 2, "Namibia Dollar"),
    "NGN": Currency("NGN", 566, 2, "Naira"),
    "NIO": Currency("NIO", 558, 2, "Cordoba Oro"),
    "NOK": Currency("NOK", 578, 2, "Norwegian Krone"),
    "NPR": Currency("NPR", 524, 2, "Nepalese Rupee"),
    "NZD": Currency("NZD", 554, 2, "New Zealand Dollar"),
    "OMR": Currency("OMR", 512, 3, "Rial Omani"),
    "PAB": Currency("PAB", 590, 2, "Balboa"),
    "PEN": Currency("PEN", 604, 2, "Sol"),
    "PGK": Currency("PGK", 598, 2, "Kina"),
    "PHP": Currency("PHP", 608, 2, "Philippine Peso"),
    "PKR": Currency("PKR", 586, 2, "Pakistan Rupee"),
    "PLN": Currency("PLN", 985, 2, "Zloty"),
    "PYG": Currency("PYG", 600, 0, "Guarani"),
    "QAR": Currency("QAR", 634, 2, "Qatari Rial"),
    "RON": Currency("RON", 946, 2, "Romanian Leu"),
    "RSD": Currency("RSD", 941, 2, "Serbian Dinar"),
    "RUB": Currency("RUB", 643, 2, "Russian Ruble"),
    "RWF": Currency("RWF", 646, 0, "Rwanda Franc"),
    "SAR": Currency("SAR", 682, 2, "Saudi Riyal"),
    "SBD": Currency("SBD", 90, 2, "Solomon Islands Dollar"),
    "SCR": Currency("SCR", 690, 2, "Seychelles Rupee"),
    "SDG": Currency("SDG", 938, 2, "Sudanese Pound"),
    "SEK": Currency("SEK", 752, 2, "Swedish Krona"),
    "SGD": Currency("SGD", 702, 2, "Singapore Dollar"),
    "SHP": Currency("SHP", 654, 2, "Saint Helena Pound"),
    "SLE": Currency("SLE", 925, 2, "Leone"),
    "SOS": Currency("SOS", 706, 2, "Somali Shilling"),
    "SRD": Currency("SRD", 968, 2, "Surinam Dollar"),
    "SSP": Currency("SSP", 728, 2, "South Sudanese Pound"),
    "STN": Currency("STN", 930, 2, "Dobra"),
    "SVC": Currency("SVC", 222, 2, "El Salvador Colon"),
    "SYP": Currency("SYP", 760, 2, "Syrian Pound"),
    "SZL": Currency("SZL", 748, 2, "Lilangeni"),
    "THB": Currency("THB", 764, 2, "Baht"),
    "TJS": Currency("TJS", 972, 2, "Somoni"),
    "TMT": Currency("TMT", 934, 2, "Turkmenistan New Manat"),
    "TND": Currency("TND", 788, 3, "Tunisian Dinar"),
    "TOP": Currency("TOP", 776, 2, "Pa'anga"),
    "TRY": Currency("TRY", 949, 2, "Turkish Lira"),
    "TTD": Currency("TTD", 780, 2, "Trinidad and Tobago Dollar"),
    "TWD": Currency("TWD", 901, 2, "New Taiwan Dollar"),
    "TZS": Currency("TZS", 834, 2, "Tanzanian Shilling"),
    "UAH": Currency("UAH", 980, 2, "Hryvnia"),
    "UGX": Currency("UGX", 800, 0, "Uganda Shilling"),
    "USD": Currency("USD", 840, 2, "US Dollar"),
    "UYU": Currency("UYU", 858, 2, "Peso Uruguayo"),
    "UZS": Currency("UZS", 860, 2, "Uzbekistan Sum"),
    "VES": Currency("VES", 928, 2, "Bolivar Soberano"),
    "VND": Currency("VND", 704, 0, "Dong"),
    "VUV": Currency("VUV", 548, 0, "Vatu"),
    "WST": Currency("WST", 882, 2, "Tala"),
    "XAF": Currency("XAF", 950, 0, "CFA Franc BEAC"),
    "XCD": Currency("XCD", 951, 2, "East Caribbean Dollar"),
    "XOF": Currency("XOF", 952, 0, "CFA Franc BCEAO"),
    "XPF": Currency("XPF", 953, 0, "CFP Franc"),
    "YER": Currency("YER", 886, 2, "Yemeni Rial"),
    "ZAR": Currency("ZAR", 710, 2, "Rand"),
    "ZMW": Currency("ZMW", 967, 2, "Zambian Kwacha"),
    "ZWL": Currency("ZWL", 932, 2, "Zimbabwe Dollar"),
}


class UnknownCurrency(KeyError):
    """A currency code that is not in the table."""


def currency(code: str) -> Currency:
    """The currency with ISO code `code` (upper case, e.g. "EUR")."""
    try:
        return CURRENCIES[code.upper()]
    except KeyError:
        raise UnknownCurrency(code) from None


def minor_digits(code: str) -> int:
    """How many decimals amounts in `code` have (2 for a currency the table does not know)."""
    found = CURRENCIES.get(code.upper())
    return found.digits if found else 2


def by_numeric(numeric: int) -> Currency:
    """The currency with ISO numeric code `numeric`."""
    for item in CURRENCIES.values():
        if item.numeric == numeric:
            return item
    raise UnknownCurrency(str(numeric))
