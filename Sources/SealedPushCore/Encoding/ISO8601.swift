/// ISO 8601 / RFC 3339 timestamps in UTC, without Foundation's formatters (so Core needs no ICU).
///
/// Formats `YYYY-MM-DDTHH:MM:SSZ`; parses `YYYY-MM-DDTHH:MM:SS`, optional `.fraction`, then `Z` or `±HH:MM`.
enum ISO8601 {
    /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the instants a four-digit year can write in UTC.
    static let earliest: Int64 = -62_167_219_200
    static let latest: Int64 = 253_402_300_799

    /// Formats whole UNIX seconds as `YYYY-MM-DDTHH:MM:SSZ`, clamped to years 0000 ... 9999.
    static func format(unixSeconds: Int64) -> String {
        let unixSeconds = min(max(unixSeconds, earliest), latest)
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = unixSeconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):"
            + "\(two(secondOfDay % 60))Z"
    }

    /// Clamps a time interval since 1970 (any double, even NaN or infinite) to whole seconds in years 0000 ... 9999.
    static func clampedSeconds(_ interval: Double) -> Int64 {
        guard interval.isFinite else { return interval > 0 ? latest : (interval < 0 ? earliest : 0) }
        let floored = interval.rounded(.down)
        if floored <= Double(earliest) { return earliest }
        if floored >= Double(latest) { return latest }
        return Int64(floored)
    }

    /// Parses an RFC 3339 timestamp into UNIX seconds (fractions are truncated toward the earlier second).
    /// - Returns: Seconds since 1970-01-01T00:00:00Z, or nil if the text is not a valid timestamp or, after its
    ///   offset, falls outside years 0000 ... 9999 UTC (so everything parsed can be formatted back).
    static func parse(_ text: String) -> Int64? {
        let chars = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= chars.count else { return nil }
            var value: Int64 = 0
            for char in chars[index..<(index + digits)] {
                guard char >= UInt8(ascii: "0"), char <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(char - UInt8(ascii: "0"))
            }
            index += digits
            return value
        }
        func expect(_ char: Character) -> Bool {
            guard index < chars.count, chars[index] == char.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            index < chars.count, chars[index] == UInt8(ascii: "T") || chars[index] == UInt8(ascii: "t")
        else { return nil }
        index += 1
        guard let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
            (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month), hour < 24,
            minute < 60, second < 60
        else { return nil }
        if expect(".") {
            let start = index
            while index < chars.count, chars[index] >= UInt8(ascii: "0"), chars[index] <= UInt8(ascii: "9") {
                index += 1
            }
            guard index > start, index - start <= 9 else { return nil }
        }
        var offset: Int64 = 0
        if expect("Z") || expect("z") {
            offset = 0
        } else if index < chars.count, chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-") {
            let sign: Int64 = chars[index] == UInt8(ascii: "+") ? 1 : -1
            index += 1
            guard let offsetHours = number(2), expect(":"), let offsetMinutes = number(2), offsetHours < 24,
                offsetMinutes < 60
            else { return nil }
            offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard index == chars.count else { return nil }
        let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        guard seconds >= earliest, seconds <= latest else { return nil }
        return seconds
    }

    private static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
