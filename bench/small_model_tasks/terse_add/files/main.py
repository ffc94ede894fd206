from calc import add, multiply

if __name__ == "__main__":
    print("2 + 3 + 4 =", add(2, 3, 4))
    print("2 * 3 * 4 =", multiply(2, 3, 4))
