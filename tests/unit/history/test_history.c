/* placeholder: replaced by its owner */
int main(void) { return 77; }
